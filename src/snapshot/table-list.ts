import { tables as catalog } from '../normalize/index.ts';
import { loadModels } from '../models/model-files.ts';
import { ConfigError } from '../util/errors.ts';
import { ident } from '../warehouse/values.ts';
import type { Warehouse } from '../warehouse/types.ts';

/** Core tables (not bookkeeping) plus the models already built in this warehouse. */
export async function defaultSnapshotTables(warehouse: Warehouse): Promise<string[]> {
  const existing = await warehouse.schemaTables();
  const core = catalog.filter((t) => t.kind !== 'bookkeeping').map((t) => t.name);
  const models = loadModels().map((m) => m.name);
  return [...core, ...models].filter((t) => existing.has(t));
}

/**
 * A ConfigError (exit 2) naming the missing privilege and its GRANT when the role may not read some of `tables`
 * (Postgres), before any file is written; otherwise nothing.
 */
export async function checkTablesReadable(warehouse: Warehouse, tables: readonly string[]): Promise<void> {
  const existing = await warehouse.schemaTables();
  const refused = tables.filter((t) => existing.get(t) === false);
  if (refused.length === 0) return;
  const [who] = await warehouse.query(`SELECT current_user AS role, current_schema() AS schema`);
  const role = String(who?.role);
  const schema = String(who?.schema);
  const named =
    refused.length > 5 ? `${refused.slice(0, 5).join(', ')}, and ${refused.length - 5} more` : refused.join(', ');
  throw new ConfigError(
    `role ${role} lacks SELECT on ${refused.length} of the tables to snapshot in schema ${schema} (${named}); ` +
      `grant it (GRANT SELECT ON ALL TABLES IN SCHEMA ${ident(schema)} TO ${ident(role)}); ` +
      'README.md, "Postgres privileges", lists what each command needs',
  );
}
