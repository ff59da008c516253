import { tables as catalog } from '../normalize/index.ts';
import { loadModels } from '../models/model-files.ts';
import type { Warehouse } from '../warehouse/types.ts';

/** Core tables (not bookkeeping) plus the models already built in this warehouse. */
export async function defaultSnapshotTables(warehouse: Warehouse): Promise<string[]> {
  const existing = new Set(
    (
      await warehouse.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
    ).map((r) => String(r.table_name)),
  );
  const core = catalog.filter((t) => t.kind !== 'bookkeeping').map((t) => t.name);
  const models = loadModels().map((m) => m.name);
  return [...core, ...models].filter((t) => existing.has(t));
}
