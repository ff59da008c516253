import { loadModels } from '../models/model-files.ts';

import { ConfigError } from '../util/errors.ts';

import { ident } from '../warehouse/values.ts';

import type { Warehouse } from '../warehouse/types.ts';
import { tables as catalog } from '../streams/registry.ts';
import { privilegesDoc } from '../util/doc-pointers.ts';

/** Core tables (not bookkeeping) plus the models already built in this warehouse's analytics schema. */
export async function defaultSnapshotTables(warehouse: Warehouse): Promise<string[]> {
  const existing = await warehouse.schemaTables();
  const built = await warehouse.modelTables();
  const core = catalog.filter((t) => t.kind !== 'bookkeeping').map((t) => t.name);
  const models = loadModels().map((m) => m.name);
  return [...core.filter((t) => existing.has(t)), ...models.filter((t) => built.has(t))];
}

/** Every table a snapshot may name, readable or not: the warehouse schema's, and the analytics schema's over them. */
async function snapshotTables(warehouse: Warehouse): Promise<Map<string, { schema: string; readable: boolean }>> {
  const [schema] = await warehouse.query(`SELECT current_schema() AS schema`);
  const out = new Map<string, { schema: string; readable: boolean }>();
  for (const [t, readable] of await warehouse.schemaTables()) out.set(t, { schema: String(schema?.schema), readable });
  for (const [t, readable] of await warehouse.modelTables())
    out.set(t, { schema: warehouse.analyticsSchema, readable });
  return out;
}

/**
 * Where a snapshot reads `table` (a file is named after the table alone): a model in the analytics schema, anything
 * else in the warehouse's own schema; null when neither has it.
 */
export async function snapshotSource(
  warehouse: Warehouse,
  table: string,
): Promise<{ readonly schema: string; readonly qualified: string } | null> {
  const found = (await snapshotTables(warehouse)).get(table);
  if (!found) return null;
  return { schema: found.schema, qualified: `${ident(found.schema)}.${ident(table)}` };
}

/**
 * A ConfigError (exit 2) naming the missing privilege and its GRANT when the role may not read some of `tables`
 * (Postgres), before any file is written; otherwise nothing.
 */
export async function checkTablesReadable(warehouse: Warehouse, tables: readonly string[]): Promise<void> {
  const existing = await snapshotTables(warehouse);
  const refused = tables.filter((t) => existing.get(t)?.readable === false);
  if (refused.length === 0) return;
  const schemas = [...new Set(refused.map((t) => existing.get(t)?.schema ?? ''))];
  const [who] = await warehouse.query(`SELECT current_user AS role`);
  const role = String(who?.role);
  const named =
    refused.length > 5 ? `${refused.slice(0, 5).join(', ')}, and ${refused.length - 5} more` : refused.join(', ');
  // The analytics schema is granted apart from the warehouse's own: a reader given only that one lacks USAGE too.
  const grants = schemas.flatMap((s) => [
    ...(s === warehouse.analyticsSchema ? [`GRANT USAGE ON SCHEMA ${ident(s)} TO ${ident(role)}`] : []),
    `GRANT SELECT ON ALL TABLES IN SCHEMA ${ident(s)} TO ${ident(role)}`,
  ]);
  throw new ConfigError(
    `role ${role} lacks SELECT on ${refused.length} of the tables to snapshot in schema ${schemas.join(' and ')} ` +
      `(${named}); grant it (${grants.join('; ')}); ` +
      `${privilegesDoc} lists what each command needs`,
  );
}
