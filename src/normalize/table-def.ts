/**
 * The table model shared by normalize (which produces rows) and warehouse (which creates and merges tables).
 * Every table is declared once, in the stream that writes it (src/streams/<stream>.ts) or among the dimensions
 * (src/streams/dimensions.ts): the warehouse's DDL, the data dictionary, the data tests and the mapping of the
 * columns whose value is a source field all derive from that declaration.
 */
export const columnTypes = [
  'bigint',
  'integer',
  'double',
  'decimal',
  'text',
  'boolean',
  'timestamptz',
  'json',
] as const;
export type ColumnType = (typeof columnTypes)[number];

export interface ColumnDef {
  readonly name: string;
  readonly type: ColumnType;
  /** Part of the primary key or always present. Defaults to false (nullable). */
  readonly notNull?: boolean;
  /** One sentence for the data dictionary. */
  readonly description: string;
  /** `<name>_id` columns: the table and column this reference resolves in (data tests check it). */
  readonly references?: { readonly table: string; readonly column: string };
  /** Enumerations: name of the enum in `enum_labels`. */
  readonly enum?: string;
  /**
   * Where a stream's mapping reads the value (see src/streams/column-readers.ts): a dotted path in the record, `''`
   * for a bridge item itself. Default: the column's name, and `<x>` for a reference column `<x>_id`.
   */
  readonly source?: string;
  /** How the value is read and typed; default: from the column's type and reference (column-readers.ts). */
  readonly read?: ColumnReader;
  /** A record without this value cannot be loaded: it is quarantined ("... is missing"). */
  readonly required?: boolean;
  /** Whether the column holds personal data, and of which kind (see PersonalData); absent: none. */
  readonly personal?: PersonalData;
}

/**
 * Personal data a column holds (docs/privacy.md):
 * - `identifier`: names a person: a name, email, phone, address, tax number, or a person's id (a numeric identifier
 *   is always a user id, so its token is the same wherever that user is named).
 * - `free_text`: what a person typed: answers, notes, messages.
 * - `identifier_and_free_text`: both, such as `_raw` (the record's whole source JSON).
 * What leaves the warehouse under `personalData: pseudonymize` carries identifiers as keyed tokens and no free text.
 */
export const personalDataKinds = ['identifier', 'free_text', 'identifier_and_free_text'] as const;
export type PersonalData = (typeof personalDataKinds)[number];

/**
 * How a stream's mapping reads a column (src/streams/column-readers.ts):
 * - `key`: the record's own integer id; absent or not an id quarantines the record.
 * - `id`: an integer id; present but not an id quarantines, absent is NULL.
 * - `attrId`, `long`, `int`, `dbl`, `bool`, `text`, `json`, `money`, `ts`: lenient (an odd value is NULL, counted).
 * - `percent`: a number in percent, stored as a fraction (divided by 100); lenient as `dbl`.
 * - `strictTs`: a timestamp that matters (cursors, log times): present but unreadable quarantines.
 * - `user`, `named`, `titled`: a reference feeding its dimension (`users`; `{id, name}`; `{id, title}`) by its id.
 * - `refId`: only the id of a reference to a table that is not a dimension (applications, awards).
 * - `parent`: the parent record's id (fan-out streams). `owner`: the id of the record a bridge row belongs to.
 * - `computed`: written by the stream's own code (`finish`).
 */
export type ColumnReader =
  | 'key'
  | 'id'
  | 'attrId'
  | 'long'
  | 'int'
  | 'dbl'
  | 'percent'
  | 'bool'
  | 'text'
  | 'json'
  | 'money'
  | 'ts'
  | 'strictTs'
  | 'user'
  | 'named'
  | 'titled'
  | 'refId'
  | 'parent'
  | 'owner'
  | 'computed';

/**
 * How staged rows merge into the table:
 * - `replace`: a staged row replaces the stored row with the same key (entity rows from their own stream).
 * - `coalesce`: a staged row only fills or updates columns it has a non-null value for; `_raw` is kept when the
 *   stored row has one. Used for rows built from references (UserRef, ProgramRef, ...), so a reference never
 *   overwrites a richer row with nulls.
 */
export type MergeMode = 'replace' | 'coalesce';

export interface TableDef {
  readonly name: string;
  readonly description: string;
  /** entity: rows of a stream; dimension: built from references; bridge: rows of an array inside a record. */
  readonly kind: 'entity' | 'dimension' | 'bridge' | 'model' | 'bookkeeping';
  /** Models: their inclusion rules (`-- includes:` header lines of models/<name>.sql), for the data dictionary. */
  readonly includes?: readonly string[];
  readonly columns: readonly ColumnDef[];
  readonly primaryKey: readonly string[];
}

/**
 * Metadata columns every entity, dimension and bridge row carries (DESIGN.md conventions). The normalizer sets
 * `_raw`; the loader sets `_extracted_at` and `_run_id`; `_deleted_at` is set only by soft deletion.
 * `_ref_only` is true for a row known only from references (never seen in its own stream): such rows are not
 * soft-deleted by a complete scan of the stream.
 */
export const metadataColumns: readonly ColumnDef[] = [
  {
    name: '_raw',
    type: 'json',
    notNull: true,
    personal: 'identifier_and_free_text',
    description: 'The source JSON of the record (or reference) this row came from, unknown fields included.',
  },
  {
    name: '_extracted_at',
    type: 'timestamptz',
    notNull: true,
    description: 'When the run that last wrote this row fetched it (UTC).',
  },
  { name: '_run_id', type: 'text', notNull: true, description: 'Id of the run that last wrote this row.' },
  {
    name: '_deleted_at',
    type: 'timestamptz',
    description: 'Set when a complete scan no longer returned the row (soft delete); NULL while it exists.',
  },
  {
    name: '_ref_only',
    type: 'boolean',
    notNull: true,
    description: 'True while the row is known only from references in other records.',
  },
] as const;

/**
 * A row as produced by the normalizer: column name to value. Values are already typed for the column:
 * bigint/integer -> number (or bigint beyond 2^53), double -> number, decimal -> string with a dot and at most
 * 2 decimals (exact money), text -> string, boolean -> boolean, timestamptz -> ISO 8601 string in UTC with `Z`,
 * json -> a JSON string. Missing metadata columns are filled by the loader.
 */
export type CellValue = string | number | bigint | boolean | null;
export type Row = Record<string, CellValue>;
