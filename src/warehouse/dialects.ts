import { duckdbSql } from './duckdb/sql-dialect.ts';
import { postgresSql } from './postgres/sql-dialect.ts';
import type { SqlDialect } from './types.ts';

/**
 * Every engine's SQL spelling, in the order the docs list them (the data dictionary's `DuckDB / Postgres` types).
 * With index.ts's factory, the one place outside the dialect folders that names them: code that must cover every
 * engine loops over this list instead.
 */
export const sqlDialects = [duckdbSql, postgresSql] as const satisfies readonly SqlDialect[];
