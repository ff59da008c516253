import type { ParquetCompression } from './types.ts';
import { literal } from './values.ts';

/*
 * DuckDB's SQL for writing and reading a Parquet file. Both dialects write through DuckDB: a DuckDB warehouse on its
 * own connection, Postgres through an in-memory DuckDB its rows are copied into (postgres/parquet-export.ts).
 */

export const copyToParquetSql = (select: string, path: string, compression: ParquetCompression): string =>
  `COPY (${select}) TO ${literal(path)} (FORMAT parquet, COMPRESSION ${compression})`;

export const countParquetSql = (path: string): string => `SELECT count(*) AS n FROM read_parquet(${literal(path)})`;

export const describeParquetSql = (path: string): string => `DESCRIBE SELECT * FROM read_parquet(${literal(path)})`;
