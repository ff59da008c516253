/**
 * One walk over a record, beside its mapping: references found wherever they are (listed in the spec or not, at
 * any depth) feed their dimension table, and, when an observer is given, every path the stream's definition does
 * not map (drift) and every mapped path holding another JSON kind are reported to it.
 */
import type { JsonObject, JsonValue } from '../util/json.ts';
import type { MappedRow, StreamMapping } from './mapping.ts';
import { namedRef, userRef } from './refs.ts';
import { ARRAY, kindOf, OBJECT, type FieldNode } from './field-kinds.ts';
import type { FieldObserver } from './field-observer.ts';

/**
 * Dimensions a reference of the `{id, name|title}` shape feeds, by the last word of the key holding it (`program`,
 * `related_program`, `programs`): such objects carry no type, so the key is what names them.
 */
const namedDimensions: Readonly<Record<string, { table: string; label: 'name' | 'title' }>> = {
  program: { table: 'programs', label: 'name' },
  stage: { table: 'stages', label: 'title' },
  task: { table: 'tasks', label: 'name' },
  team: { table: 'teams', label: 'name' },
  fund: { table: 'funds', label: 'name' },
  organization: { table: 'organizations', label: 'name' },
  org: { table: 'organizations', label: 'name' },
};

function dimensionOfKey(name: string): { table: string; label: 'name' | 'title' } | undefined {
  const key = name.endsWith('[]') ? name.slice(0, -2) : name;
  const cut = key.lastIndexOf('_');
  let word = (cut < 0 ? key : key.slice(cut + 1)).toLowerCase();
  if (!(word in namedDimensions) && word.endsWith('s')) word = word.slice(0, -1);
  return namedDimensions[word];
}

const ID_TEXT = /^\s*-?\d+\s*$/;

/** An id the reference helpers take without quarantining the record (drift must never reject one). */
function usableId(v: JsonValue | undefined): boolean {
  return typeof v === 'number' ? Number.isSafeInteger(v) : typeof v === 'string' && ID_TEXT.test(v) && v.length < 20;
}

/** A UserRef: an id with names and an email, other members allowed (an organization member is one). */
function isUserShaped(o: JsonObject): boolean {
  return usableId(o.id) && typeof o.email === 'string' && ('first_name' in o || 'last_name' in o);
}

/** A `{id, name}` / `{id, title}` object under a key naming a dimension, and nothing else. */
function namedShape(o: JsonObject, key: string): { table: string; label: 'name' | 'title' } | undefined {
  const dim = dimensionOfKey(key);
  if (dim === undefined || !usableId(o.id) || typeof o[dim.label] !== 'string') return undefined;
  for (const k in o) if (k !== 'id' && k !== dim.label) return undefined;
  return dim;
}

/** Feeds a reference-shaped object to its dimension; returns whether it was one. */
function feedReference(o: JsonObject, key: string, out: MappedRow[]): boolean {
  if (isUserShaped(o)) {
    userRef(out, o, key);
    return true;
  }
  const dim = namedShape(o, key);
  if (dim === undefined) return false;
  namedRef(out, dim.table, o, key, dim.label);
  return true;
}

/** References anywhere inside `v` (held under `key`). */
function discover(v: JsonValue, key: string, out: MappedRow[]): void {
  if (typeof v !== 'object' || v === null) return;
  if (Array.isArray(v)) {
    for (const item of v) discover(item, key, out);
    return;
  }
  if (feedReference(v, key, out)) return;
  for (const k in v) discover(v[k]!, k, out);
}

/** Members of a value kept whole: references in them count, the value itself was read by the mapping. */
function discoverMembers(v: JsonValue, key: string, out: MappedRow[]): void {
  if (Array.isArray(v)) for (const item of v) discover(item, key, out);
  else if (typeof v === 'object' && v !== null) for (const k in v) discover(v[k]!, k, out);
}

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/**
 * A value at a path the definition does not map. Scalars, arrays, empty objects and reference-shaped objects are
 * reported at their path (a reference is one field, promotable as such); other objects are walked member by member.
 */
function unmapped(v: JsonValue, path: string, key: string, out: MappedRow[], obs: FieldObserver | undefined): void {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    if (feedReference(v, key, out)) {
      obs?.unmapped(path, v);
      return;
    }
    let any = false;
    for (const k in v) {
      any = true;
      unmapped(v[k]!, `${path}.${k}`, k, out, obs);
    }
    if (!any) obs?.unmapped(path, v);
    return;
  }
  obs?.unmapped(path, v);
  if (Array.isArray(v)) for (const item of v) discover(item, key, out);
}

/** A mapped value: checked against its node; `path` is built only where something is reported or looked into. */
function known(
  v: JsonValue,
  node: FieldNode,
  parent: string,
  key: string,
  out: MappedRow[],
  obs: FieldObserver | undefined,
): void {
  const kind = kindOf(v);
  if (kind === 0) return;
  if ((node.kinds & kind) === 0) {
    obs?.retyped(join(parent, key), v);
    if (!node.ref) discover(v, key, out);
    return;
  }
  if (kind === OBJECT) {
    const o = v as JsonObject;
    if (node.fields === undefined) {
      if (node.ref) discoverMembers(o, key, out);
      else discover(o, key, out);
      return;
    }
    const path = join(parent, key);
    for (const k in o) {
      const child = node.fields.get(k);
      if (child === undefined) unmapped(o[k]!, `${path}.${k}`, k, out, obs);
      else known(o[k]!, child, path, k, out, obs);
    }
  } else if (kind === ARRAY) {
    const items = v as JsonValue[];
    if (node.items === undefined) {
      if (!node.ref) for (const item of items) discover(item, key, out);
      return;
    }
    if (items.length === 0) return;
    const itemKey = `${key}[]`;
    for (const item of items) known(item, node.items, parent, itemKey, out, obs);
  }
}

/**
 * Walks `record` against its stream's definition `root`: reference rows found outside what the mapping reads go to
 * `out`; drift goes to `obs`. Paths are dotted member names, `[]` marking the items of an array.
 */
export function walkRecord(record: JsonObject, root: FieldNode, out: MappedRow[], obs?: FieldObserver): void {
  const fields = root.fields;
  if (fields === undefined) return;
  for (const k in record) {
    const child = fields.get(k);
    const v = record[k]!;
    if (child === undefined) unmapped(v, k, k, out, obs);
    else known(v, child, '', k, out, obs);
  }
}

/** Rows of references found beside the mapping; reused (map is synchronous) so a record allocates no array for it. */
const found: MappedRow[] = [];

/**
 * A stream's mapping plus the record walk: references wherever they are feed their dimensions, and drift is told to
 * `ctx.fields`. The walk runs first, so a record the mapping quarantines still reports its drift.
 */
export function withRecordWalk(mapping: StreamMapping, root: FieldNode): StreamMapping {
  return {
    owns: mapping.owns,
    cascades: mapping.cascades,
    map(record, ctx) {
      ctx.fields?.startRecord();
      found.length = 0;
      walkRecord(record, root, found, ctx.fields);
      const out = mapping.map(record, ctx);
      for (const row of found) out.push(row);
      found.length = 0;
      return out;
    },
  };
}
