import { streamMappings } from '../normalize/index.ts';
import type { Cascade, CommitInfo, CommitPlan, CompleteScope } from '../warehouse/types.ts';
import { streamCatalog } from './streams/index.ts';
import { noHolds, type DeletionHolds } from './deletion-holds.ts';
import type { StreamDef } from './stream-def.ts';

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
  def: StreamDef,
  holds: DeletionHolds = noHolds,
): {
  completeScopes: CompleteScope[];
  cascades: readonly Cascade[];
  dropMarksOfDeleted?: CommitPlan['dropMarksOfDeleted'];
} {
  if (def.mode !== 'scan' || holds.everything) return { completeScopes: [], cascades: [] };
  const completeScopes = streamMappings[def.name].owns.flatMap((o, i): CompleteScope[] => {
    if (o.parentColumn) return [];
    const held = holds.keys[i] ?? [];
    if (held.length > maxHeldKeys || (held.length > 0 && !o.idColumn)) return [];
    return [
      { table: o.table, where: o.where, ...(held.length > 0 ? { keep: { column: o.idColumn!, values: held } } : {}) },
    ];
  });
  // Every fan-out stream of the catalog hanging off this one, selected in this run or not: the cascade soft-deleted
  // the children of deleted parents in all of them.
  const kids = streamCatalog.filter((s) => s.parent?.stream === def.name).map((s) => s.name);
  const parentTable = streamMappings[def.name].owns[0]?.table;
  return {
    completeScopes,
    cascades: streamMappings[def.name].cascades,
    ...(kids.length > 0 && parentTable
      ? { dropMarksOfDeleted: { streams: kids, parentTable, parentColumn: 'id' } }
      : {}),
  };
}

/** What the complete walks of these parents' children may soft-delete: only rows of those parents, sparing `holds`. */
export function parentDeletions(
  def: StreamDef,
  parentIds: readonly number[],
  holds: DeletionHolds = noHolds,
): CompleteScope[] {
  if (def.mode !== 'scan' || holds.everything) return [];
  return streamMappings[def.name].owns.flatMap((o, i): CompleteScope[] => {
    if (!o.parentColumn) return [];
    const held = new Set(holds.keys[i] ?? []);
    const ids = held.size > 0 ? parentIds.filter((id) => !held.has(id)) : parentIds;
    return [{ table: o.table, where: o.where, parentColumn: o.parentColumn, parentIds: ids }];
  });
}

/** Rows a commit soft-deleted, over every table. */
export function deletedRows(committed: CommitInfo): number {
  return Object.values(committed.deleted).reduce((a, b) => a + b, 0);
}
