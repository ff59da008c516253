import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { Warehouse } from '../warehouse/types.ts';
import { GrantflowError } from '../util/errors.ts';
import { copyPostgresTable } from './postgres-copy.ts';
import { snapshotSource } from './table-list.ts';

export type ParquetCompression = 'zstd' | 'snappy' | 'uncompressed';

export interface ParquetFileInfo {
  readonly rows: number;
  readonly schema: readonly { readonly name: string; readonly type: string }[];
}

/** Writes a warehouse table to a Parquet file with DuckDB's built-in writer, whatever the warehouse engine. */
export interface ParquetWriter {
  write(table: string, path: string): Promise<void>;
  /** Rows and column types as the written file declares them. */
  inspect(path: string): Promise<ParquetFileInfo>;
  close(): Promise<void>;
}

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const literal = (value: string): string => `'${value.replace(/'/g, "''")}'`;

const copySql = (select: string, path: string, compression: ParquetCompression): string =>
  `COPY (${select}) TO ${literal(path)} (FORMAT parquet, COMPRESSION ${compression})`;

const countSql = (path: string): string => `SELECT count(*) AS n FROM read_parquet(${literal(path)})`;
const describeSql = (path: string): string => `DESCRIBE SELECT * FROM read_parquet(${literal(path)})`;

/** DuckDB warehouse: COPY straight from its own connection (the file is locked by this process anyway). */
class DuckDBWarehouseWriter implements ParquetWriter {
  constructor(
    private readonly warehouse: Warehouse,
    private readonly compression: ParquetCompression,
  ) {}

  async write(table: string, path: string): Promise<void> {
    const source = await snapshotSource(this.warehouse, table);
    if (source === null) {
      throw new GrantflowError(
        `table ${table} does not exist in the warehouse ${this.warehouse.description}; run a sync (and models) first`,
      );
    }
    await this.warehouse.exec(copySql(`SELECT * FROM ${source.qualified}`, path, this.compression));
  }

  async inspect(path: string): Promise<ParquetFileInfo> {
    const [count] = await this.warehouse.query(countSql(path));
    const cols = await this.warehouse.query(describeSql(path));
    return {
      rows: Number(count?.n ?? 0),
      schema: cols.map((c) => ({ name: String(c.column_name), type: String(c.column_type) })),
    };
  }

  async close(): Promise<void> {}
}

/**
 * Postgres warehouse: DuckDB's postgres extension needs a download (no network here), so rows are streamed
 * out in batches into an in-memory DuckDB table of the same types, which DuckDB then writes.
 */
class PostgresWarehouseWriter implements ParquetWriter {
  private constructor(
    private readonly warehouse: Warehouse,
    private readonly compression: ParquetCompression,
    private readonly instance: DuckDBInstance,
    private readonly duck: DuckDBConnection,
    private readonly viewKeys: ViewKeys,
  ) {}

  static async open(
    warehouse: Warehouse,
    compression: ParquetCompression,
    viewKeys: ViewKeys,
  ): Promise<PostgresWarehouseWriter> {
    const instance = await DuckDBInstance.create(':memory:');
    const duck = await instance.connect();
    return new PostgresWarehouseWriter(warehouse, compression, instance, duck, viewKeys);
  }

  async write(table: string, path: string): Promise<void> {
    const staged = '_snapshot_copy';
    await copyPostgresTable(this.warehouse, this.duck, table, staged, this.viewKeys[table]);
    await this.duck.run(copySql(`SELECT * FROM ${ident(staged)}`, path, this.compression));
    await this.duck.run(`DROP TABLE ${ident(staged)}`);
  }

  async inspect(path: string): Promise<ParquetFileInfo> {
    const count = await this.duck.runAndReadAll(countSql(path));
    const cols = await this.duck.runAndReadAll(describeSql(path));
    return {
      rows: Number(count.getRowObjects()[0]?.n ?? 0),
      schema: cols.getRowObjects().map((c) => ({ name: String(c.column_name), type: String(c.column_type) })),
    };
  }

  async close(): Promise<void> {
    this.duck.closeSync();
    this.instance.closeSync();
  }
}

/** Per view, columns that order its rows uniquely: Postgres pages a view's rows by them (see copyPostgresTable). */
export type ViewKeys = Readonly<Record<string, readonly string[]>>;

export async function openParquetWriter(
  warehouse: Warehouse,
  compression: ParquetCompression,
  viewKeys: ViewKeys = {},
): Promise<ParquetWriter> {
  return warehouse.inProcess
    ? new DuckDBWarehouseWriter(warehouse, compression)
    : PostgresWarehouseWriter.open(warehouse, compression, viewKeys);
}
