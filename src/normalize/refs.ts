import { createHash } from 'node:crypto';
import type { JsonValue } from '../util/json.ts';
import { GrantflowError } from '../util/errors.ts';
import { arr, obj, optId, text, untyped } from './coerce.ts';
import { QuarantineError } from './quarantine.ts';
import type { MappedRow, NormalizeContext, OwnedScope } from './mapping.ts';
import type { Row } from './table-def.ts';

/**
 * References (UserRef, ProgramRef, ...) become `<name>_id` columns and a 'coalesce' row of their dimension
 * table, so a reference never overwrites a richer row with nulls. A bare integer (the write shape) is accepted
 * as an id-only reference.
 */
export type Id = number | bigint;

function refObject(v: JsonValue | undefined, field: string): { id: Id; o: Record<string, JsonValue> | null } | null {
  // An empty array is PHP's empty map: no reference, like null.
  if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) return null;
  if (typeof v === 'object' && !Array.isArray(v)) {
    const id = optId(v.id, `${field}.id`);
    if (id !== null) return { id, o: v };
    // A reference without an id ({name: "..."}) resolves to no row: what it names stays only in `_raw`, counted.
    if (Object.entries(v).some(([k, x]) => k !== 'id' && x !== null)) untyped(v);
    return null;
  }
  const id = optId(v, field);
  return id === null ? null : { id, o: null };
}

/** A UserRef: users row (id, first_name, last_name, email) and the id. */
export function userRef(out: MappedRow[], v: JsonValue | undefined, field: string): Id | null {
  const r = refObject(v, field);
  if (r === null) return null;
  const row: Row = { id: r.id, _raw: JSON.stringify(v) };
  if (r.o !== null) {
    if (r.o.first_name != null) row.first_name = text(r.o.first_name);
    if (r.o.last_name != null) row.last_name = text(r.o.last_name);
    if (r.o.email != null) row.email = text(r.o.email);
  }
  out.push({ table: 'users', row, merge: 'coalesce' });
  return r.id;
}

/** A {id, name|title} reference into `table` (programs, stages, statuses, tasks, teams, funds, organizations). */
export function namedRef(
  out: MappedRow[],
  table: string,
  v: JsonValue | undefined,
  field: string,
  label: 'name' | 'title' = 'name',
): Id | null {
  const r = refObject(v, field);
  if (r === null) return null;
  const row: Row = { id: r.id, _raw: JSON.stringify(v) };
  if (r.o !== null && r.o[label] != null) row[label] = text(r.o[label]);
  out.push({ table, row, merge: 'coalesce' });
  return r.id;
}

/** Only the id of a reference whose table is not a dimension (ApplicationRef, DecisionRef). */
export function refId(v: JsonValue | undefined, field: string): Id | null {
  return refObject(v, field)?.id ?? null;
}

/** The parent id of a per-parent stream; its absence is a bug of the caller, not of the record. */
export function parentId(ctx: NormalizeContext, stream: string): number {
  if (ctx.parentId === undefined) {
    throw new GrantflowError(`normalize: stream ${stream} needs ctx.parentId (the parent record's id)`);
  }
  return ctx.parentId;
}

/**
 * Stable negative id for records the API sends without one: -(1 + first 52 bits of sha256(parts)). Negative
 * so it can never collide with a real id.
 */
export function syntheticId(parts: readonly (string | number | bigint | boolean | null)[]): number {
  const hex = createHash('sha256')
    .update(JSON.stringify(parts.map((p) => (typeof p === 'bigint' ? String(p) : p))))
    .digest('hex');
  return -(1 + parseInt(hex.slice(0, 13), 16));
}

/** The custom_field_values of one entity type, as a stream owns them (one row per entry of its `custom_fields`). */
export function customFieldValuesScope(entityType: string): OwnedScope {
  return {
    table: 'custom_field_values',
    where: { entity_type: entityType },
    idColumn: 'entity_id',
    from: { key: 'custom_fields', shape: 'array' },
  };
}

/** custom_fields arrays: one custom_field_values row each, plus a ref-only custom_fields row (id, name). */
export function customFieldValues(out: MappedRow[], entityType: string, entityId: Id, v: JsonValue | undefined): void {
  for (const entry of arr(v)) {
    const cf = obj(entry);
    if (cf === null) continue;
    const fieldId = optId(cf.id, 'custom_fields[].id');
    if (fieldId === null) throw new QuarantineError('custom_fields[] entry without id');
    const raw = JSON.stringify(cf);
    const name = text(cf.name);
    out.push({
      table: 'custom_field_values',
      row: { entity_type: entityType, entity_id: entityId, field_id: fieldId, name, value: text(cf.value), _raw: raw },
      merge: 'replace',
    });
    const def: Row = { id: fieldId, _raw: raw };
    if (name !== null) def.name = name;
    out.push({ table: 'custom_fields', row: def, merge: 'coalesce' });
  }
}
