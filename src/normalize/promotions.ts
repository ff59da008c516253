import type { JsonObject, JsonValue } from '../util/json.ts';
import { ConfigError } from '../util/errors.ts';
import type { StreamMapping } from './mapping.ts';
import type { CellValue, ColumnDef, ColumnType, TableDef } from './table-def.ts';

/**
 * Promotion without code (the `promote` pipeline setting): chosen unmapped source paths of a stream become typed
 * columns of its entity table. The normaliser fills them for the rows it writes (`promotedValue`); rows already held
 * are filled from `_raw` by SQL that reads the same way (warehouse/promote-sql.ts).
 */
export const promotionTypes = ['json', 'integer', 'number', 'text', 'boolean', 'reference'] as const;
export type PromotionType = (typeof promotionTypes)[number];

/** One entry of the `promote` setting. */
export interface PromotionSetting {
  readonly stream: string;
  /** Dotted member names from the record's root (`extra.score`); array items cannot be promoted. */
  readonly path: string;
  readonly column: string;
  readonly type: PromotionType;
  /** `reference` only: the dimension its id resolves in (default users). */
  readonly references?: string;
}

/** A checked promotion: where its column lives and how it is read. */
export interface Promotion {
  readonly stream: string;
  readonly table: string;
  readonly path: readonly string[];
  /** The column's final name (`<name>_id` for a reference). */
  readonly column: string;
  readonly type: PromotionType;
  readonly references?: string;
}

const SEGMENT = /^[A-Za-z0-9_]+$/;
const COLUMN = /^[a-z_][a-z0-9_]{0,62}$/;
const columnTypeOf: Readonly<Record<PromotionType, ColumnType>> = {
  json: 'json',
  integer: 'bigint',
  number: 'double',
  text: 'text',
  boolean: 'boolean',
  reference: 'bigint',
};

/** Checks the setting against the catalog; one clear line naming the entry when it cannot be applied. */
export function planPromotions(
  settings: readonly PromotionSetting[],
  mappings: Readonly<Record<string, StreamMapping | undefined>>,
  catalog: readonly TableDef[],
): Promotion[] {
  const byName = new Map(catalog.map((t) => [t.name, t]));
  const taken = new Set<string>();
  return settings.map((s, i) => {
    const where = `promote[${i}] (${s.stream} ${s.path})`;
    const mapping = mappings[s.stream];
    if (mapping === undefined || s.stream === 'report_downloads')
      throw new ConfigError(`${where}: "${s.stream}" is not a stream whose records can be promoted from`);
    const path = s.path.split('.');
    if (!path.every((p) => SEGMENT.test(p)))
      throw new ConfigError(
        `${where}: path must be dotted member names (letters, digits, underscores), such as extra.score`,
      );
    const column = s.type === 'reference' && !s.column.endsWith('_id') ? `${s.column}_id` : s.column;
    if (!COLUMN.test(column) || column.startsWith('_'))
      throw new ConfigError(`${where}: column "${column}" must be a lower-case SQL name not starting with _`);
    const table = mapping.owns[0]!.table;
    const def = byName.get(table);
    if (!def) throw new ConfigError(`${where}: table ${table} is not in the catalog`);
    if (def.columns.some((c) => c.name === column) || taken.has(`${table}.${column}`))
      throw new ConfigError(`${where}: table ${table} already has a column ${column}`);
    taken.add(`${table}.${column}`);
    if (s.type !== 'reference') return { stream: s.stream, table, path, column, type: s.type };
    const references = s.references ?? 'users';
    const target = byName.get(references);
    if (!target || !target.columns.some((c) => c.name === 'id') || target.kind === 'bookkeeping')
      throw new ConfigError(`${where}: references "${references}" is not a table with an id`);
    return { stream: s.stream, table, path, column, type: s.type, references };
  });
}

/** The catalog with the promoted columns added to their tables (nullable, after the table's own columns). */
export function promotedCatalog(catalog: readonly TableDef[], promotions: readonly Promotion[]): TableDef[] {
  if (promotions.length === 0) return [...catalog];
  return catalog.map((t) => {
    const added = promotions.filter((p) => p.table === t.name).map(promotedColumn);
    return added.length === 0 ? t : { ...t, columns: [...t.columns, ...added] };
  });
}

function promotedColumn(p: Promotion): ColumnDef {
  const description = `Promoted from source path ${p.path.join('.')} (${p.type}) by the promote setting.`;
  return {
    name: p.column,
    type: columnTypeOf[p.type],
    description,
    ...(p.references ? { references: { table: p.references, column: 'id' } } : {}),
  };
}

const INTEGER_TEXT = /^-?\d{1,15}$/;

/** An integer as both engines read it from JSON text: up to 15 digits, from a JSON number or a string. */
function integer(v: JsonValue | undefined): number | null {
  if (typeof v === 'number') return Number.isInteger(v) && INTEGER_TEXT.test(JSON.stringify(v)) ? v : null;
  if (typeof v === 'string' && INTEGER_TEXT.test(v)) return Number(v);
  return null;
}

/** The value at `p.path` of `record`, typed as the column takes it (NULL when absent or of another shape). */
export function promotedValue(record: JsonObject, p: Promotion): CellValue {
  let v: JsonValue | undefined = record;
  for (const key of p.path) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
    v = v[key];
  }
  if (v === undefined || v === null) return null;
  switch (p.type) {
    case 'json':
      return JSON.stringify(v);
    case 'integer':
      return integer(v);
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'text':
      return typeof v === 'string' ? v : JSON.stringify(v);
    case 'reference':
      return typeof v === 'object' && !Array.isArray(v) ? integer(v.id) : null;
  }
}
