/**
 * The comments (`COMMENT ON`) a BI tool reads, read the engine's own way in each dialect rather than through
 * grantflow's query, for tests that check what grantflow wrote.
 */
import type { Warehouse } from '../../src/warehouse/index.ts';

export interface Described {
  readonly table: string;
  readonly column: string | null;
  readonly comment: string | null;
}

/** Every table, view and column of `schema` with its comment, read the engine's own way (not grantflow's query). */
export async function catalogComments(w: Warehouse, schema: string): Promise<Described[]> {
  const rows =
    w.dialect === 'duckdb'
      ? await w.query(
          `SELECT table_name AS t, column_name AS c, comment FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = $1
           UNION ALL SELECT table_name, NULL, comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = $1
           UNION ALL SELECT view_name, NULL, comment FROM duckdb_views() WHERE database_name = current_database() AND schema_name = $1 AND NOT internal`,
          [schema],
        )
      : await w.query(
          `SELECT c.relname AS t, a.attname AS c, d.description AS comment
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
             LEFT JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = a.attnum
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'v')
           UNION ALL
           SELECT c.relname, NULL, d.description
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             LEFT JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'v')`,
          [schema],
        );
  return (
    rows
      .map((r) => ({
        table: String(r.t),
        column: r.c === null ? null : String(r.c),
        comment: r.comment === null ? null : String(r.comment),
      }))
      .filter((d) => !d.table.startsWith('_grantflow_'))
      // The engines return a UNION in no set order: sorted, two reads of the same catalog compare equal.
      .sort((a, b) => `${a.table}.${a.column ?? ''}`.localeCompare(`${b.table}.${b.column ?? ''}`))
  );
}
