import { streamMappings } from '../normalize/index.ts';
import type { Cascade, CommitInfo, CommitPlan, CompleteScope } from '../warehouse/types.ts';
import { streamCatalog } from './streams/index.ts';
import type { StreamDef } from './stream-def.ts';

/**
 * What a complete scan of a top-level stream may soft-delete (its own tables, in its scope) and the cascades to
 * children in other streams' tables. Append-only logs never delete.
 */
export function scanDeletions(def: StreamDef): {
  completeScopes: CompleteScope[];
  cascades: readonly Cascade[];
  dropMarksOfDeleted?: CommitPlan['dropMarksOfDeleted'];
} {
  if (def.mode !== 'scan') return { completeScopes: [], cascades: [] };
  const completeScopes = streamMappings[def.name].owns
    .filter((o) => !o.parentColumn)
    .map((o) => ({ table: o.table, where: o.where }));
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

/** What the complete walks of these parents' children may soft-delete: only rows of those parents. */
export function parentDeletions(def: StreamDef, parentIds: readonly number[]): CompleteScope[] {
  if (def.mode !== 'scan') return [];
  return streamMappings[def.name].owns
    .filter((o) => o.parentColumn)
    .map((o) => ({ table: o.table, where: o.where, parentColumn: o.parentColumn, parentIds }));
}

/** Rows a commit soft-deleted, over every table. */
export function deletedRows(committed: CommitInfo): number {
  return Object.values(committed.deleted).reduce((a, b) => a + b, 0);
}
