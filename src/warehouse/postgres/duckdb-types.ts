/**
 * Postgres column types (information_schema `data_type` plus precision/scale) to the DuckDB types the
 * in-memory copy uses, so the Parquet file gets the same logical types a DuckDB warehouse would give it.
 */
export interface PgColumn {
  readonly name: string;
  readonly dataType: string;
  readonly precision: number | null;
  readonly scale: number | null;
}

export type AppendKind = 'bigint' | 'integer' | 'double' | 'boolean' | 'text';

export interface DuckColumn {
  readonly name: string;
  readonly duckType: string;
  /** How a value is handed to the appender; everything else goes as text and DuckDB casts it exactly. */
  readonly append: AppendKind;
}

export function duckColumn(c: PgColumn): DuckColumn {
  const t = c.dataType.toLowerCase();
  const name = c.name;
  switch (t) {
    case 'bigint':
      return { name, duckType: 'BIGINT', append: 'bigint' };
    case 'integer':
      return { name, duckType: 'INTEGER', append: 'integer' };
    case 'smallint':
      return { name, duckType: 'SMALLINT', append: 'integer' };
    case 'double precision':
      return { name, duckType: 'DOUBLE', append: 'double' };
    case 'real':
      return { name, duckType: 'FLOAT', append: 'double' };
    case 'boolean':
      return { name, duckType: 'BOOLEAN', append: 'boolean' };
    case 'numeric':
      // Unconstrained numeric (e.g. an unCAST aggregate): wide enough for money sums and ratios.
      return c.precision !== null && c.precision <= 38
        ? { name, duckType: `DECIMAL(${c.precision},${c.scale ?? 0})`, append: 'text' }
        : { name, duckType: 'DECIMAL(38,10)', append: 'text' };
    case 'timestamp with time zone':
      return { name, duckType: 'TIMESTAMPTZ', append: 'text' };
    case 'timestamp without time zone':
      return { name, duckType: 'TIMESTAMP', append: 'text' };
    case 'date':
      return { name, duckType: 'DATE', append: 'text' };
    case 'json':
    case 'jsonb':
      return { name, duckType: 'JSON', append: 'text' };
    default:
      return { name, duckType: 'VARCHAR', append: 'text' };
  }
}
