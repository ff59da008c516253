import { streamMappings } from '../normalize/index.ts';
import type { Cascade, CommitInfo, CompleteScope } from '../warehouse/types.ts';
import type { StreamDef } from './stream-def.ts';

/**
 * What a complete scan of a top-level stream may soft-delete (its own tables, in its scope) and the cascades to
 * children in other streams' tables. Append-only logs never delete.
 */
export function scanDeletions(def: StreamDef): { completeScopes: CompleteScope[]; cascades: readonly Cascade[] } {
  if (def.mode !== 'scan') return { completeScopes: [], cascades: [] };
  const completeScopes = streamMappings[def.name].owns
    .filter((o) => !o.parentColumn)
    .map((o) => ({ table: o.table, where: o.where }));
  return { completeScopes, cascades: streamMappings[def.name].cascades };
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
