import type { Warehouse } from './types.ts';

/**
 * Whether a sync (or replay) has written this warehouse: its runs table exists in the warehouse's schema. Through
 * schemaTables, which on Postgres lists tables the role may not read too: a reader without SELECT is told which grant
 * it lacks rather than that the warehouse holds no data.
 */
export async function syncedBefore(warehouse: Warehouse): Promise<boolean> {
  return (await warehouse.schemaTables()).has('_grantflow_runs');
}
