import type { ParquetCompression, SelectedColumn, SnapshotShape, TableSource } from './types.ts';
import { ident, literal } from './values.ts';

/*
 * DuckDB's SQL for writing and reading a Parquet file. Both dialects write through DuckDB: a DuckDB warehouse on its
 * own connection, Postgres through an in-memory DuckDB its rows are copied into (postgres/parquet-export.ts).
 */

export const copyToParquetSql = (select: string, path: string, compression: ParquetCompression): string =>
  `COPY (${select}) TO ${literal(path)} (FORMAT parquet, COMPRESSION ${compression})`;

export const countParquetSql = (path: string): string => `SELECT count(*) AS n FROM read_parquet(${literal(path)})`;

export const describeParquetSql = (path: string): string => `DESCRIBE SELECT * FROM read_parquet(${literal(path)})`;

/** The columns (`column_name`, `column_type`) of a DuckDB table or view, for snapshotSelectSql. */
export const describeSql = (from: string): string => `DESCRIBE SELECT * FROM ${from}`;

/** The row source's own copy of every record: large, and left out of a snapshot unless asked for (`snapshotRaw`). */
const rawColumn = '_raw';

/**
 * What a snapshot file holds of `from` (DuckDB SQL): its columns, less `_raw` unless `shape.raw`, then `_snapshot_at`,
 * the snapshot's time as a TIMESTAMPTZ, so files read together over time say which snapshot each row is of (a hive
 * folder name is text to every reader). JSON columns are written as text: DuckDB cuts a long value's min/max
 * statistics at 256 bytes, and a reader that parses the statistics of a JSON column (parquetjs) fails on the cut.
 */
export function snapshotSelectSql(
  from: string,
  columns: readonly Readonly<Record<string, unknown>>[],
  shape: SnapshotShape,
): string {
  const kept = columns.filter((c) => shape.raw || c.column_name !== rawColumn);
  const list = kept.map((c) => {
    const name = ident(String(c.column_name));
    return String(c.column_type) === 'JSON' ? `CAST(${name} AS VARCHAR) AS ${name}` : name;
  });
  list.push(`CAST(${literal(shape.snapshotAt.toISOString())} AS TIMESTAMPTZ) AS _snapshot_at`);
  return `SELECT ${list.join(', ')} FROM ${from}`;
}

/** The SELECT of a table's rows as a snapshot writes them: every column, or the ones `source.columns` chooses. */
export const selectSql = (source: TableSource): string =>
  source.columns === undefined
    ? `SELECT * FROM ${source.qualified}`
    : `SELECT ${selectList(source.columns)} FROM ${source.qualified} t`;

/** `sql AS name, ...`; a table left with no column at all selects a constant, so its rows are still counted. */
export const selectList = (columns: readonly SelectedColumn[]): string =>
  columns.length === 0 ? 'NULL AS _no_column' : columns.map((c) => `${c.sql} AS ${ident(c.name)}`).join(', ');
