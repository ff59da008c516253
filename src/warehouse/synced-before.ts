import type { Warehouse } from './types.ts';

/**
 * Whether a sync (or replay) has written this warehouse: its runs table exists in the warehouse's schema. On Postgres
 * from pg_class: information_schema lists only tables the role holds a privilege on, so a reader without SELECT was
 * told the warehouse held no data instead of which grant it lacks.
 */
export async function syncedBefore(warehouse: Warehouse): Promise<boolean> {
  const rows = await warehouse.query(
    warehouse.dialect === 'postgres'
      ? `SELECT 1 AS found FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND c.relname = '_grantflow_runs'`
      : `SELECT 1 AS found FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = '_grantflow_runs'`,
  );
  return rows.length > 0;
}
