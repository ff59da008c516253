import { hasMetadata } from '../warehouse/index.ts';

import { ident } from '../warehouse/values.ts';

import type { Warehouse } from '../warehouse/types.ts';
import { tableByName } from '../streams/registry.ts';

/**
 * Core tables of `tables` that run `runId` left as they were: none of their rows was merged by it (every merge, of a
 * record or a reference, sets `_run_id`) and none soft-deleted since it started (deletions set `_deleted_at` to the
 * time of their load, which is no earlier than the run's start, also when a killed run is resumed). What a
 * `sync --streams` did not touch, so its snapshot need not be written again. Models and tables without those columns
 * are never reported unchanged: nothing says when they changed.
 */
export async function tablesUnchangedByRun(
  warehouse: Warehouse,
  runId: string,
  tables: readonly string[],
): Promise<Set<string>> {
  const [run] = await warehouse.query(`SELECT count(*) AS n FROM _grantflow_runs WHERE run_id = $1`, [runId]);
  // No record of the run (not a sync's): when it started is unknown, so nothing can be said unchanged.
  if (Number(run?.n ?? 0) === 0) return new Set();
  const started = `(SELECT started_at FROM _grantflow_runs WHERE run_id = $1)`;
  const unchanged = new Set<string>();
  for (const name of tables) {
    const def = tableByName(name);
    if (def === undefined || !hasMetadata(def)) continue;
    const [hit] = await warehouse.query(
      `SELECT 1 AS hit FROM ${ident(name)} WHERE _run_id = $1 OR _deleted_at >= ${started} LIMIT 1`,
      [runId],
    );
    if (hit === undefined) unchanged.add(name);
  }
  return unchanged;
}
