import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import type { CellValue } from '../../normalize/table-def.ts';
import type {
  ParquetCompression,
  ParquetExport,
  ParquetFileInfo,
  SelectedColumn,
  SnapshotShape,
  TableSource,
  ViewKeys,
  Warehouse,
} from '../types.ts';
import {
  copyToParquetSql,
  countParquetSql,
  describeParquetSql,
  describeSql,
  selectList,
  snapshotSelectSql,
} from '../parquet-sql.ts';
import { ident } from '../values.ts';
import { duckColumn, type DuckColumn } from './duckdb-types.ts';

const batchSize = 10_000;

/**
 * DuckDB's postgres extension needs a download (no network here), so rows are streamed out in batches into an
 * in-memory DuckDB table of the same types, which DuckDB then writes.
 */
export class PostgresParquetExport implements ParquetExport {
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
  ): Promise<PostgresParquetExport> {
    const instance = await DuckDBInstance.create(':memory:');
    const duck = await instance.connect();
    return new PostgresParquetExport(warehouse, compression, instance, duck, viewKeys);
  }

  async write(source: TableSource, path: string, shape: SnapshotShape): Promise<boolean> {
    const staged = '_snapshot_copy';
    const copied = await copyPostgresTable(this.warehouse, this.duck, source, staged, this.viewKeys[source.table]);
    if (copied === null) return false;
    const columns = (await this.duck.runAndReadAll(describeSql(ident(staged)))).getRowObjects();
    await this.duck.run(copyToParquetSql(snapshotSelectSql(ident(staged), columns, shape), path, this.compression));
    await this.duck.run(`DROP TABLE ${ident(staged)}`);
    return true;
  }

  async inspect(path: string): Promise<ParquetFileInfo> {
    const count = await this.duck.runAndReadAll(countParquetSql(path));
    const cols = await this.duck.runAndReadAll(describeParquetSql(path));
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

/** Columns of a Postgres table of `schema`, in table order. */
export async function pgColumns(warehouse: Warehouse, schema: string, table: string): Promise<DuckColumn[]> {
  const rows = await warehouse.query(
    `SELECT column_name, data_type, numeric_precision, numeric_scale
       FROM information_schema.columns
      WHERE table_schema = $1 AND table_name = $2
      ORDER BY ordinal_position`,
    [schema, table],
  );
  return rows.map((r) =>
    duckColumn({
      name: String(r.column_name),
      dataType: String(r.data_type),
      precision: r.numeric_precision === null ? null : Number(r.numeric_precision),
      scale: r.numeric_scale === null ? null : Number(r.numeric_scale),
    }),
  );
}

function appendCell(appender: DuckDBAppender, column: DuckColumn, v: CellValue | undefined): void {
  if (v === null || v === undefined) return appender.appendNull();
  switch (column.append) {
    case 'bigint':
      return appender.appendBigInt(BigInt(v));
    case 'integer':
      return appender.appendInteger(Number(v));
    case 'double':
      return appender.appendDouble(Number(v));
    case 'boolean':
      return appender.appendBoolean(v === true || v === 't' || v === 'true');
    default:
      return appender.appendVarchar(String(v));
  }
}

/**
 * Copies one Postgres table (or view) into an in-memory DuckDB table of the same types, in batches, through the
 * appender, so memory stays bounded whatever the table's key: a table is paged by ctid, a view (which has none) by
 * `viewKey`, columns that order its rows uniquely (a portfolio's view: its site, then the table's primary key). A
 * view without one (a portfolio's model: an aggregate, small) is read in one query. Returns the rows copied, or null
 * when information_schema shows no column of the table (missing, or hidden from this role).
 */
export async function copyPostgresTable(
  warehouse: Warehouse,
  duck: DuckDBConnection,
  source: TableSource,
  target: string,
  viewKey?: readonly string[],
): Promise<number | null> {
  const { schema, table } = source;
  const all = await pgColumns(warehouse, schema, table);
  if (all.length === 0) return null;
  const columns = source.columns === undefined ? all : chosenColumns(all, source.columns);
  await duck.run(
    `CREATE OR REPLACE TABLE ${ident(target)} (${columns.map((c) => `${ident(c.name)} ${c.duckType}`).join(', ')})`,
  );
  const select =
    source.columns === undefined ? columns.map((c) => `t.${ident(c.name)}`).join(', ') : selectList(source.columns);
  const from = `${source.qualified} t`;
  const pages = (await isView(warehouse, schema, table))
    ? viewPages(warehouse, from, select, viewKey)
    : ctidPages(warehouse, from, select);
  let total = 0;
  for await (const rows of pages) {
    if (rows.length === 0) break;
    const appender = await duck.createAppender(target);
    for (const row of rows) {
      for (const c of columns) appendCell(appender, c, row[c.name]);
      appender.endRow();
    }
    appender.flushSync();
    appender.closeSync();
    total += rows.length;
  }
  return total;
}

/** The DuckDB columns of a chosen projection: each as its table has it, a token as text. */
function chosenColumns(all: readonly DuckColumn[], chosen: readonly SelectedColumn[]): DuckColumn[] {
  const byName = new Map(all.map((c) => [c.name, c]));
  if (chosen.length === 0) return [duckColumn({ name: '_no_column', dataType: 'text', precision: null, scale: null })];
  return chosen.map((c) => {
    const column = byName.get(c.name);
    return column === undefined || c.token
      ? duckColumn({ name: c.name, dataType: 'text', precision: null, scale: null })
      : column;
  });
}

type Rows = Record<string, CellValue>[];

/** `from`: the table's name with its schema, quoted, aliased `t`. */
async function* ctidPages(warehouse: Warehouse, from: string, select: string): AsyncGenerator<Rows> {
  let after: string | null = null;
  for (;;) {
    const rows: Rows = await warehouse.query(
      after === null
        ? `SELECT t.ctid::text AS "__ctid", ${select} FROM ${from} ORDER BY t.ctid LIMIT ${batchSize}`
        : `SELECT t.ctid::text AS "__ctid", ${select} FROM ${from} WHERE t.ctid > $1::tid ORDER BY t.ctid LIMIT ${batchSize}`,
      after === null ? [] : [after],
    );
    yield rows;
    if (rows.length < batchSize) return;
    after = String(rows[rows.length - 1]?.__ctid);
  }
}

async function* viewPages(
  warehouse: Warehouse,
  from: string,
  select: string,
  key: readonly string[] | undefined,
): AsyncGenerator<Rows> {
  if (!key || key.length === 0) {
    yield await warehouse.query(`SELECT ${select} FROM ${from}`);
    return;
  }
  // The key read as stored, beside the columns written: a written key column may be a token (docs/privacy.md).
  const keyList = key.map((k) => `t.${ident(k)}`).join(', ');
  const keyColumns = key.map((k, i) => `t.${ident(k)} AS "__key${i}"`).join(', ');
  let after: CellValue[] | null = null;
  for (;;) {
    const where: string = after === null ? '' : `WHERE (${keyList}) > (${key.map((_, i) => `$${i + 1}`).join(', ')})`;
    const rows: Rows = await warehouse.query(
      `SELECT ${select}, ${keyColumns} FROM ${from} ${where} ORDER BY ${keyList} LIMIT ${batchSize}`,
      after ?? [],
    );
    yield rows;
    if (rows.length < batchSize) return;
    const last = rows[rows.length - 1] ?? {};
    after = key.map((_, i) => last[`__key${i}`] ?? null);
  }
}

async function isView(warehouse: Warehouse, schema: string, table: string): Promise<boolean> {
  const rows = await warehouse.query(
    `SELECT 1 AS found FROM information_schema.views WHERE table_schema = $1 AND table_name = $2`,
    [schema, table],
  );
  return rows.length > 0;
}
