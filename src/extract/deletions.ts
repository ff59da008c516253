import type { Cascade } from '../normalize/cascade.ts';
import type { CommitInfo, CommitPlan, CompleteScope } from '../warehouse/types.ts';

import { noHolds, type DeletionHolds } from './deletion-holds.ts';

import type { StreamDef } from '../streams/stream-def.ts';

import type { StreamInfo } from './types.ts';
import type { StreamCatalog } from '../streams/catalog.ts';

/**
 * Held keys one scope may name; past it the scope deletes nothing this time (a site that never sends a list would
 * otherwise put every record's id into one statement).
 */
export const maxHeldKeys = 2000;

/**
 * What a complete scan of a top-level stream may soft-delete (its own tables, in its scope, sparing `holds`) and the
 * cascades to children in other streams' tables. Append-only logs never delete; a scan held whole deletes nothing.
 */
export function scanDeletions(
  catalog: StreamCatalog,
  def: StreamDef,
  holds: DeletionHolds = noHolds,
): {
  completeScopes: CompleteScope[];
  cascades: readonly Cascade[];
  dropMarksOfDeleted?: CommitPlan['dropMarksOfDeleted'];
} {
  if (def.mode !== 'scan' || holds.everything) return { completeScopes: [], cascades: [] };
  const completeScopes = catalog.mappingOf(def.name).owns.flatMap((o, i): CompleteScope[] => {
    if (o.parentColumn) return [];
    const held = holds.keys[i] ?? [];
    if (held.length > maxHeldKeys || (held.length > 0 && !o.idColumn)) return [];
    return [
      { table: o.table, where: o.where, ...(held.length > 0 ? { keep: { column: o.idColumn!, values: held } } : {}) },
    ];
  });
  // Every fan-out stream of the catalog hanging off this one, selected in this run or not: the cascade soft-deleted
  // the children of deleted parents in all of them.
  const kids = catalog.streams.filter((s) => s.parent?.stream === def.name).map((s) => s.name);
  const parentTable = catalog.mappingOf(def.name).owns[0]?.table;
  return {
    completeScopes,
    cascades: catalog.mappingOf(def.name).cascades,
    ...(kids.length > 0 && parentTable
      ? { dropMarksOfDeleted: { streams: kids, parentTable, parentColumn: 'id' } }
      : {}),
  };
}

/** What the complete walks of these parents' children may soft-delete: only rows of those parents, sparing `holds`. */
export function parentDeletions(
  catalog: StreamCatalog,
  def: StreamDef,
  parentIds: readonly number[],
  holds: DeletionHolds = noHolds,
): CompleteScope[] {
  if (def.mode !== 'scan' || holds.everything) return [];
  return catalog.mappingOf(def.name).owns.flatMap((o, i): CompleteScope[] => {
    if (!o.parentColumn) return [];
    const held = new Set(holds.keys[i] ?? []);
    const ids = held.size > 0 ? parentIds.filter((id) => !held.has(id)) : parentIds;
    return [{ table: o.table, where: o.where, parentColumn: o.parentColumn, parentIds: ids }];
  });
}

/**
 * Adds what a commit of `def` soft-deleted to its info: rows of the stream's own table count as its records
 * (`deleted`); rows of the other tables it owns (its lists: bridges, custom field values) are kept apart in
 * `listsDeleted`, and rows of other streams' tables, deleted because their parent went (cascades), in `cascaded`, so
 * three applications deleted read 3, not 3 plus their collaborators, labels and field values.
 */
export function addDeletions(catalog: StreamCatalog, info: StreamInfo, def: StreamDef, committed: CommitInfo): void {
  const [own, ...lists] = catalog.mappingOf(def.name).owns.map((o) => o.table);
  const listTables = new Set(lists);
  for (const [table, n] of Object.entries(committed.deleted)) {
    if (n === 0) continue;
    if (table === own) info.deleted += n;
    else {
      const apart = listTables.has(table) ? (info.listsDeleted ??= {}) : (info.cascaded ??= {});
      apart[table] = (apart[table] ?? 0) + n;
    }
  }
}
