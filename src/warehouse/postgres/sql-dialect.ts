import type { ColumnType } from '../../normalize/table-def.ts';
import type { PromotionType } from '../../normalize/promotions.ts';
import type { DecimalPrecision, SqlDialect } from '../types.ts';
import { ident, literal } from '../values.ts';

const types: Record<ColumnType, string> = {
  bigint: 'BIGINT',
  integer: 'INTEGER',
  double: 'DOUBLE PRECISION',
  decimal: 'NUMERIC(18,2)',
  text: 'TEXT',
  boolean: 'BOOLEAN',
  timestamptz: 'TIMESTAMPTZ',
  // json, not jsonb: `_raw` must round-trip byte for byte.
  json: 'JSON',
};

/** SQLSTATE 55P03: a statement gave up on a lock under its `lock_timeout`. */
export function isLockTimeout(e: unknown): boolean {
  return (e as { code?: unknown } | null)?.code === '55P03';
}

export const postgresSql: SqlDialect = {
  name: 'postgres',
  defaultSchema: 'public',
  declaresPrimaryKey: true,
  sqlType(type: ColumnType, decimal?: DecimalPrecision): string {
    return type === 'decimal' && decimal ? `NUMERIC(${decimal.precision},${decimal.scale})` : types[type];
  },
  rawValue(path: readonly string[], type: PromotionType): string {
    const at = `ARRAY[${path.map(literal).join(', ')}]`;
    const t = `json_typeof(_raw #> ${at})`;
    const s = `(_raw #>> ${at})`;
    const j = `(_raw #> ${at})`;
    switch (type) {
      case 'json':
        return `CASE WHEN ${t} <> 'null' THEN ${j} END`;
      case 'integer':
      case 'reference':
        return `CASE WHEN ${t} IN ('number', 'string') AND ${s} ~ '^-?[0-9]{1,15}$' THEN CAST(${s} AS BIGINT) END`;
      case 'number':
        return `CASE WHEN ${t} = 'number' THEN CAST(${s} AS DOUBLE PRECISION) END`;
      case 'boolean':
        return `CASE WHEN ${t} = 'boolean' THEN CAST(${s} AS BOOLEAN) END`;
      case 'text':
        return `CASE WHEN ${t} = 'string' THEN ${s} WHEN ${t} <> 'null' THEN CAST(${j} AS TEXT) END`;
    }
  },
  isLockTimeout,
  // pg_description through col_description / obj_description; tables (plain and partitioned) and views.
  commentsQuery: `SELECT c.relname AS table_name, a.attname AS column_name, col_description(c.oid, a.attnum) AS comment
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v')
    UNION ALL
    SELECT c.relname, NULL, obj_description(c.oid, 'pg_class')
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v')`,
  // Postgres fixed the view's columns when it was made; its column keeps the old name until renamed too.
  renameViewColumnSql: (view, from, to) => `ALTER VIEW ${view} RENAME COLUMN ${ident(from)} TO ${ident(to)}`,
};
