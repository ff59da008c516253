import {
  ANY,
  APPLICATION,
  ARRAY,
  B,
  CUSTOM_FIELDS,
  I,
  M,
  N,
  NAMED,
  OBJECT,
  S,
  TITLED,
  USER,
  type FieldNode,
} from '../normalize/field-kinds.ts';
import type { ColumnReader, TableDef } from '../normalize/table-def.ts';
import { readerOf, sourceless, sourceOf } from './column-readers.ts';
import type { StreamDefinition } from './stream-definition.ts';

/** The JSON kinds each reader accepts without calling the value retyped. */
const nodeOfReader: Readonly<Record<Exclude<ColumnReader, 'parent' | 'owner' | 'computed'>, FieldNode>> = {
  key: I,
  id: I,
  attrId: I,
  long: I,
  int: N,
  dbl: M,
  percent: M,
  money: M,
  bool: B,
  text: S,
  ts: S,
  strictTs: S,
  json: ANY,
  user: USER,
  named: NAMED,
  titled: TITLED,
  refId: APPLICATION,
};

/** A tree of plain objects, turned into FieldNodes (Maps) at the end. */
interface Draft {
  node?: FieldNode;
  members: Map<string, Draft>;
}

/** `node` at `path`; `whole`: the node as given, members declared below it by columns set aside. */
function place(root: Draft, path: string, node: FieldNode, whole = false): void {
  let d = root;
  if (path !== '')
    for (const p of path.split('.')) {
      let next = d.members.get(p);
      if (next === undefined) d.members.set(p, (next = { members: new Map() }));
      d = next;
    }
  d.node = node;
  if (whole) d.members.clear();
}

function build(d: Draft, isRoot: boolean): FieldNode {
  if (d.members.size === 0) return d.node ?? ANY;
  const fields = new Map([...d.members].map(([k, v]) => [k, build(v, false)]));
  // An object read member by member; `[]` is PHP's empty map, so it is an object's "nothing", not drift.
  return { kinds: isRoot ? OBJECT : OBJECT | ARRAY, fields };
}

function columnsInto(root: Draft, table: TableDef): void {
  for (const c of table.columns) {
    const reader = readerOf(c);
    if (sourceless.has(reader)) continue;
    place(root, sourceOf(c), nodeOfReader[reader as keyof typeof nodeOfReader]);
  }
}

/** The fields a stream's records are known to hold (what its mapping reads), for the record walk's drift catalog. */
export function deriveFields(def: StreamDefinition): FieldNode | null {
  if (def.notFromSite === true) return null;
  const root: Draft = { members: new Map() };
  columnsInto(root, def.table);
  for (const b of def.bridges ?? []) {
    if (b.byHand === true) continue;
    const item: Draft = { members: new Map() };
    columnsInto(item, b);
    place(root, b.from, { kinds: ARRAY, items: build(item, true) });
  }
  if (def.customFields !== undefined) place(root, 'custom_fields', CUSTOM_FIELDS);
  for (const [k, node] of Object.entries(def.reads ?? {})) place(root, k, node, true);
  return build(root, true);
}
