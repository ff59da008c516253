import type { ColumnType } from '../../normalize/table-def.ts';
import type { PromotionType } from '../../normalize/promotions.ts';
import type { DecimalPrecision, SqlDialect } from '../types.ts';
import { literal } from '../values.ts';

const types: Record<ColumnType, string> = {
  bigint: 'BIGINT',
  integer: 'INTEGER',
  double: 'DOUBLE',
  decimal: 'DECIMAL(18,2)',
  text: 'VARCHAR',
  boolean: 'BOOLEAN',
  timestamptz: 'TIMESTAMPTZ',
  json: 'JSON',
};

export const duckdbSql: SqlDialect = {
  name: 'duckdb',
  defaultSchema: 'main',
  // DuckDB keeps primary-key indexes (ART) in memory and maintains them on every insert: ~165 MB and 2.6x slower
  // inserts per 2M composite keys; +6 % CPU on the medium scale (BENCHMARKS.md figure 9, not yet run on the large
  // one). Its tables declare none; the merge keeps keys unique and data tests check it (architecture.md#keys-and-descriptions).
  declaresPrimaryKey: false,
  sqlType(type: ColumnType, decimal?: DecimalPrecision): string {
    return type === 'decimal' && decimal ? `DECIMAL(${decimal.precision},${decimal.scale})` : types[type];
  },
  rawValue(path: readonly string[], type: PromotionType): string {
    const at = literal(`$.${path.map((k) => `"${k}"`).join('.')}`);
    const t = `json_type(_raw, ${at})`;
    const s = `json_extract_string(_raw, ${at})`;
    const j = `json_extract(_raw, ${at})`;
    switch (type) {
      case 'json':
        return `CASE WHEN ${t} <> 'NULL' THEN ${j} END`;
      case 'integer':
      case 'reference':
        return `CASE WHEN ${t} IN ('BIGINT', 'UBIGINT', 'VARCHAR') AND regexp_full_match(${s}, '-?[0-9]{1,15}') THEN CAST(${s} AS BIGINT) END`;
      case 'number':
        return `CASE WHEN ${t} IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN CAST(${s} AS DOUBLE) END`;
      case 'boolean':
        return `CASE WHEN ${t} = 'BOOLEAN' THEN CAST(${s} AS BOOLEAN) END`;
      case 'text':
        return `CASE WHEN ${t} = 'VARCHAR' THEN ${s} WHEN ${t} <> 'NULL' THEN CAST(${j} AS VARCHAR) END`;
    }
  },
  isLockTimeout: () => false,
  // DuckDB keeps comments in its catalog functions; `duckdb_columns()` lists the columns of views too.
  commentsQuery: `SELECT table_name, column_name, comment FROM duckdb_columns()
     WHERE database_name = current_database() AND schema_name = $1
   UNION ALL SELECT table_name, NULL, comment FROM duckdb_tables()
     WHERE database_name = current_database() AND schema_name = $1
   UNION ALL SELECT view_name, NULL, comment FROM duckdb_views()
     WHERE database_name = current_database() AND schema_name = $1 AND NOT internal`,
  renameViewColumnSql: () => null,
};
