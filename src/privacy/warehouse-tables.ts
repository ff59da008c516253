import type { Warehouse } from '../warehouse/types.ts';
import { ident } from '../warehouse/values.ts';

/** A table of the warehouse (its schema or the analytics schema) with its columns in order. */
export interface WarehouseTable {
  readonly schema: string;
  readonly table: string;
  readonly qualified: string;
  readonly columns: readonly string[];
  /** A model table of the analytics schema. */
  readonly model: boolean;
}

/**
 * Every base table of the warehouse's schema and of its analytics schema, with its columns (one catalog query).
 * Views (`<table>_current`, a portfolio's) are left out: they show rows of tables already listed.
 */
export async function warehouseTables(warehouse: Warehouse): Promise<WarehouseTable[]> {
  const [current] = await warehouse.query(`SELECT current_schema() AS schema`);
  const schema = String(current?.schema);
  const rows = await warehouse.query(
    `SELECT c.table_schema, c.table_name, c.column_name
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema IN ($1, $2) AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_schema, c.table_name, c.ordinal_position`,
    [schema, warehouse.analyticsSchema],
  );
  const byKey = new Map<string, { schema: string; table: string; columns: string[] }>();
  for (const r of rows) {
    const key = `${String(r.table_schema)}.${String(r.table_name)}`;
    const entry = byKey.get(key) ?? { schema: String(r.table_schema), table: String(r.table_name), columns: [] };
    entry.columns.push(String(r.column_name));
    byKey.set(key, entry);
  }
  return [...byKey.values()].map((t) => ({
    ...t,
    qualified: `${ident(t.schema)}.${ident(t.table)}`,
    model: t.schema === warehouse.analyticsSchema && t.schema !== schema,
  }));
}
