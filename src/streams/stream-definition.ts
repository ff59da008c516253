import type { JsonObject } from '../util/json.ts';
import { byId, type StreamDef } from './stream-def.ts';
import type { FieldNode } from '../normalize/field-kinds.ts';
import type { MappedRow, NormalizeContext, OwnedScope, StreamMapping } from '../normalize/mapping.ts';
import type { Row, TableDef } from '../normalize/table-def.ts';
import type { Cascade } from '../normalize/cascade.ts';

/**
 * A bridge: one row per item of an array in the record (`awards[].payments`). With every column's source given (or
 * `owner`, the record's id), the rows derive from the declaration; `byHand` bridges are written by `finish`.
 */
export interface BridgeTable extends TableDef {
  readonly from: string;
  readonly byHand?: true;
  /** `from` is a key the spec does not list: a record without it is not counted as silent (OwnedScope `optional`). */
  readonly optional?: true;
}

/**
 * One stream, declared once (dlt-style): the endpoint, and the tables its records fill with where each column's value
 * comes from. The DDL, the data dictionary, the data tests, the record walk's field list and the mapping of every
 * column read from a source field derive from it; only what is computed (`finish`) is code.
 */
export interface StreamDefinition extends StreamDef {
  /** The stream's own table: one row per record (the first row the mapping returns). */
  readonly table: TableDef;
  readonly bridges?: readonly BridgeTable[];
  /** Other tables only this stream writes, filled by `finish` (task_responses from a task's `data`). */
  readonly otherTables?: readonly TableDef[];
  /** The entity type of the record's `custom_fields` entries (custom_field_values rows), when it carries them. */
  readonly customFields?: string;
  /** Scopes a complete scan soft-deletes in; default: the own table, the bridges, the custom field values. */
  readonly owns?: readonly OwnedScope[];
  /** Scopes owned besides the default ones. */
  readonly alsoOwns?: readonly OwnedScope[];
  readonly cascades?: readonly Cascade[];
  /**
   * The hand-written part of the mapping, after the declared columns and bridges are read: computed columns (set on
   * `row`), synthetic keys, rows of other tables (pushed to `out`). Throws QuarantineError for an unusable record.
   */
  readonly finish?: (record: JsonObject, row: Row, out: MappedRow[], ctx: NormalizeContext) => void;
  /** Source fields `finish` reads besides the declared columns, for the drift catalog (record-walk.ts). */
  readonly reads?: Readonly<Record<string, FieldNode>>;
  /** A stream built by grantflow rather than read from the site (report files): no record walk, no drift. */
  readonly notFromSite?: true;
  /** A mapping written wholly by hand (report files): the declared columns are then documentation only. */
  readonly mapping?: StreamMapping;
}

/** Declared values with the endpoint's defaults: a list, scanned whole every run. */
export type StreamDefinitionInput = Omit<StreamDefinition, 'shape' | 'mode' | 'keyOf'> &
  Partial<Pick<StreamDefinition, 'shape' | 'mode' | 'keyOf'>>;

export function defineStream<const N extends string>(
  input: StreamDefinitionInput & { readonly name: N },
): StreamDefinition & { readonly name: N } {
  return { shape: 'list', mode: 'scan', keyOf: byId, ...input };
}
