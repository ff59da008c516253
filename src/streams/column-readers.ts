import type { JsonObject, JsonValue } from '../util/json.ts';
import { attrId, bool, dbl, int, json, long, money, obj, optId, reqId, reqTs, text, ts } from '../normalize/coerce.ts';
import type { MappedRow, NormalizeContext } from '../normalize/mapping.ts';
import { QuarantineError } from '../normalize/quarantine.ts';
import { namedRef, refId, userRef } from '../normalize/refs.ts';
import type { CellValue, ColumnDef, ColumnReader } from '../normalize/table-def.ts';

/** Dimensions whose references are `{id, title}`; other dimensions' are `{id, name}`. */
const titledDimensions = new Set(['stages']);
/** Tables a reference feeds with a row of its own (`coalesce`); a reference to any other table gives only its id. */
const dimensionTables = new Set([
  'programs',
  'stages',
  'statuses',
  'payment_statuses',
  'tasks',
  'teams',
  'funds',
  'organizations',
]);

/** The reader a column gets when it names none: from its reference, else its type. */
export function readerOf(c: ColumnDef): ColumnReader {
  if (c.read !== undefined) return c.read;
  const target = c.references?.table;
  if (target !== undefined) {
    if (target === 'users') return 'user';
    if (titledDimensions.has(target)) return 'titled';
    return dimensionTables.has(target) ? 'named' : 'refId';
  }
  switch (c.type) {
    case 'bigint':
      return c.name === 'id' && c.notNull === true ? 'key' : 'attrId';
    case 'integer':
      return 'int';
    case 'double':
      return 'dbl';
    case 'decimal':
      return 'money';
    case 'boolean':
      return 'bool';
    case 'timestamptz':
      return 'ts';
    case 'json':
      return 'json';
    case 'text':
      return 'text';
  }
}

/** The source path a column reads: declared, else `<x>` for a reference `<x>_id`, else the column's name. */
export function sourceOf(c: ColumnDef): string {
  if (c.source !== undefined) return c.source;
  return c.references !== undefined && c.name.endsWith('_id') ? c.name.slice(0, -3) : c.name;
}

/** Readers that take no source field. */
export const sourceless: ReadonlySet<ColumnReader> = new Set(['parent', 'owner', 'computed']);

/**
 * The value at a dotted `path` of `record` ('' is the record itself). Each object on the way is read once per record
 * (`cache`), so a member that is not an object is counted as untyped once, not once per column reading through it.
 */
export function valueAt(
  record: JsonObject,
  path: string,
  cache: Map<string, JsonObject | null>,
): JsonValue | undefined {
  if (path === '') return record;
  const dot = path.lastIndexOf('.');
  if (dot < 0) return record[path];
  const prefix = path.slice(0, dot);
  let holder = cache.get(prefix);
  if (holder === undefined) {
    const v = valueAt(record, prefix, cache);
    holder = v === undefined ? null : obj(v);
    cache.set(prefix, holder);
  }
  return holder === null ? undefined : holder[path.slice(dot + 1)];
}

export interface ReadContext {
  readonly out: MappedRow[];
  readonly ctx: NormalizeContext;
  readonly stream: string;
  /** The id of the record a bridge item belongs to. */
  readonly owner?: CellValue;
  /** How a missing required value is named: `<field> is missing` (records) or `<bridge>[] entry without <x>`. */
  readonly missing: (field: string, source: string) => string;
}

/** Reads one column's value with its reader; `field` names it in a quarantine reason (`decision.id`). */
export function readValue(reader: ColumnReader, v: JsonValue | undefined, field: string, rc: ReadContext): CellValue {
  const zone = rc.ctx.siteTimeZone;
  switch (reader) {
    case 'key':
      return reqId(v, field);
    case 'id':
      return optId(v, field);
    case 'attrId':
      return attrId(v, field);
    case 'long':
      return long(v);
    case 'int':
      return int(v);
    case 'dbl':
      return dbl(v);
    case 'bool':
      return bool(v);
    case 'text':
      return text(v);
    case 'json':
      return json(v);
    case 'money':
      return money(v);
    case 'ts':
      return ts(v, zone);
    case 'strictTs':
      return reqTs(v, zone, field);
    case 'user':
      return userRef(rc.out, v, field);
    case 'named':
    case 'titled':
      throw new Error('named references are read by readColumn, which knows their table');
    case 'refId':
      return refId(v, field);
    case 'parent':
      if (rc.ctx.parentId === undefined) throw new Error(`normalize: stream ${rc.stream} needs ctx.parentId`);
      return rc.ctx.parentId;
    case 'owner':
      return rc.owner ?? null;
    case 'computed':
      return null;
  }
}

/** One column of `holder` (a record, or a bridge item), with its declared source, reader and requirement. */
export function readColumn(
  c: ColumnDef,
  holder: JsonObject,
  cache: Map<string, JsonObject | null>,
  rc: ReadContext,
  prefix: string,
): CellValue {
  const reader = readerOf(c);
  const source = sourceOf(c);
  const v = sourceless.has(reader) ? undefined : valueAt(holder, source, cache);
  const field = `${prefix}${source}`;
  const value =
    reader === 'named' || reader === 'titled'
      ? namedRef(rc.out, c.references!.table, v, field, reader === 'titled' ? 'title' : 'name')
      : readValue(reader, v, field, rc);
  if (value === null && c.required === true) {
    const isRef = reader === 'user' || reader === 'named' || reader === 'titled' || reader === 'refId';
    throw new QuarantineError(rc.missing(isRef ? `${field}.id` : field, source));
  }
  return value;
}
