import type { Warehouse } from '../warehouse/types.ts';
import { ident } from '../warehouse/values.ts';
import { selectList } from '../warehouse/parquet-sql.ts';
import { pseudonymTable, selectedColumns, type PersonalColumns } from './personal-columns.ts';
import { warehouseTables } from './warehouse-tables.ts';

/**
 * The schema of the deidentified views, named like the analytics schema beside it: `deidentified` beside the
 * engine's default schema, `<schema>_deidentified` beside any other, so two warehouses of one database keep theirs apart.
 */
export function deidentifiedSchemaFor(analyticsSchema: string): string {
  return analyticsSchema === 'analytics' ? 'deidentified' : analyticsSchema.replace(/_analytics$/, '_deidentified');
}

/**
 * One view per core table in the deidentified schema, with its rows as `personalData: pseudonymize` writes them:
 * identifiers as their tokens (joined from `_grantflow_pseudonyms`), free text, `_raw` and undeclared columns left
 * out. The views hold no key and no identifier: a role granted only this schema reads no personal data (on Postgres
 * a view reads its tables with its owner's rights). Made again by each sync run with the key, after its refresh, so
 * a column added to a table shows; one transaction, so a reader sees the old views or the new ones.
 */
export async function createDeidentifiedViews(warehouse: Warehouse, personal: PersonalColumns): Promise<string[]> {
  const schema = deidentifiedSchemaFor(warehouse.analyticsSchema);
  const tokens = warehouse.qualify(pseudonymTable);
  const tables = (await warehouseTables(warehouse)).filter((t) => !t.model && personal.isCore(t.table));
  const statements = [`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`];
  for (const t of tables) {
    const view = `${ident(schema)}.${ident(t.table)}`;
    const columns = selectedColumns(personal, t.table, t.columns, 'pseudonymize', tokens);
    statements.push(`DROP VIEW IF EXISTS ${view}`);
    statements.push(`CREATE VIEW ${view} AS SELECT ${selectList(columns)} FROM ${t.qualified} t`);
  }
  await warehouse.execInTransaction(statements, schema, 'making the deidentified views');
  return tables.map((t) => t.table);
}
