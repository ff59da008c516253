import type { JsonObject, JsonValue } from '../util/json.ts';
import {
  attrId,
  bool,
  dbl,
  int,
  json,
  long,
  money,
  obj,
  optId,
  percentAsFraction,
  reqId,
  reqTs,
  text,
  ts,
} from '../normalize/coerce.ts';
import type { MappedRow, NormalizeContext } from '../normalize/mapping.ts';
import { QuarantineError } from '../normalize/quarantine.ts';
import { namedRef, parentId, refId, userRef } from '../normalize/refs.ts';
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

/** Types one value; `field` names it in a quarantine reason (`decision.id`). */
type ReadValue = (v: JsonValue | undefined, field: string, rc: ReadContext) => CellValue;

/** The function behind a reader; `table` is the referenced table of a named reference. */
function readValueOf(reader: ColumnReader, table: string | undefined): ReadValue {
  switch (reader) {
    case 'key':
      return (v, field) => reqId(v, field);
    case 'id':
      return (v, field) => optId(v, field);
    case 'attrId':
      return (v, field) => attrId(v, field);
    case 'long':
      return (v) => long(v);
    case 'int':
      return (v) => int(v);
    case 'dbl':
      return (v) => dbl(v);
    case 'percent':
      return (v) => percentAsFraction(dbl(v));
    case 'bool':
      return (v) => bool(v);
    case 'text':
      return (v) => text(v);
    case 'json':
      return (v) => json(v);
    case 'money':
      return (v) => money(v);
    case 'ts':
      return (v, _field, rc) => ts(v, rc.ctx.siteTimeZone);
    case 'strictTs':
      return (v, field, rc) => reqTs(v, rc.ctx.siteTimeZone, field);
    case 'user':
      return (v, field, rc) => userRef(rc.out, v, field);
    case 'named':
    case 'titled': {
      if (table === undefined) throw new Error(`a ${reader} reader needs a column that references a table`);
      const label = reader === 'titled' ? 'title' : 'name';
      return (v, field, rc) => namedRef(rc.out, table, v, field, label);
    }
    case 'refId':
      return (v, field) => refId(v, field);
    case 'parent':
      return (_v, _field, rc) => parentId(rc.ctx, rc.stream);
    case 'owner':
      return (_v, _field, rc) => rc.owner ?? null;
    case 'computed':
      return () => null;
  }
}

const referenceReaders: ReadonlySet<ColumnReader> = new Set(['user', 'named', 'titled', 'refId']);

/** A column ready to read: its reader, source and quarantine rule resolved once, not per record. */
export interface CompiledColumn {
  readonly name: string;
  read(holder: JsonObject, cache: Map<string, JsonObject | null>, rc: ReadContext): CellValue;
}

/**
 * One column of a record or a bridge item (`prefix` names the bridge in quarantine reasons: `payments[].`), with its
 * declared source, reader and requirement.
 */
export function compileColumn(c: ColumnDef, prefix: string): CompiledColumn {
  const reader = readerOf(c);
  const source = sourceOf(c);
  const field = `${prefix}${source}`;
  const readValue = readValueOf(reader, c.references?.table);
  const takesSource = !sourceless.has(reader);
  const missingField = c.required === true ? (referenceReaders.has(reader) ? `${field}.id` : field) : undefined;
  return {
    name: c.name,
    read(holder, cache, rc) {
      const value = readValue(takesSource ? valueAt(holder, source, cache) : undefined, field, rc);
      if (value === null && missingField !== undefined) throw new QuarantineError(rc.missing(missingField, source));
      return value;
    },
  };
}
