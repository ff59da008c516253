import type {
  ParquetCompression,
  ParquetExport,
  ParquetFileInfo,
  SnapshotShape,
  TableSource,
  Warehouse,
} from '../types.ts';
import {
  copyToParquetSql,
  countParquetSql,
  describeParquetSql,
  describeSql,
  selectSql,
  snapshotSelectSql,
} from '../parquet-sql.ts';

/** A DuckDB warehouse writes with a COPY from its own connection (the file is locked by this process anyway). */
export class DuckDBParquetExport implements ParquetExport {
  constructor(
    private readonly warehouse: Warehouse,
    private readonly compression: ParquetCompression,
  ) {}

  async write(source: TableSource, path: string, shape: SnapshotShape): Promise<boolean> {
    // The columns personal data leaves (selectSql), then the snapshot's shape over them.
    const from = `(${selectSql(source)}) AS snapshot_source`;
    const columns = await this.warehouse.query(describeSql(from));
    await this.warehouse.exec(copyToParquetSql(snapshotSelectSql(from, columns, shape), path, this.compression));
    return true;
  }

  async inspect(path: string): Promise<ParquetFileInfo> {
    const [count] = await this.warehouse.query(countParquetSql(path));
    const cols = await this.warehouse.query(describeParquetSql(path));
    return {
      rows: Number(count?.n ?? 0),
      schema: cols.map((c) => ({ name: String(c.column_name), type: String(c.column_type) })),
    };
  }

  async close(): Promise<void> {}
}
