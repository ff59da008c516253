import type { ParquetCompression, ParquetFileInfo, SnapshotShape, ViewKeys, Warehouse } from '../warehouse/types.ts';
import { GrantflowError } from '../util/errors.ts';
import { snapshotSource } from './table-list.ts';

export type { ParquetCompression, SnapshotShape, ViewKeys } from '../warehouse/types.ts';

/** Writes a warehouse table, named as a snapshot names it, to a Parquet file through the warehouse's export. */
export interface ParquetWriter {
  write(table: string, path: string): Promise<void>;
  /** Rows and column types as the written file declares them. */
  inspect(path: string): Promise<ParquetFileInfo>;
  close(): Promise<void>;
}

export async function openParquetWriter(
  warehouse: Warehouse,
  compression: ParquetCompression,
  viewKeys: ViewKeys,
  shape: SnapshotShape,
): Promise<ParquetWriter> {
  const out = await warehouse.openParquetExport(compression, viewKeys);
  return {
    async write(table, path) {
      // A model is read from the analytics schema, anything else from the warehouse's own (see snapshotSource).
      const source = await snapshotSource(warehouse, table);
      if (source === null || !(await out.write({ ...source, table }, path, shape))) {
        throw new GrantflowError(
          `table ${table} does not exist in the warehouse ${warehouse.description}; run a sync (and models) first`,
        );
      }
    },
    inspect: (path) => out.inspect(path),
    close: () => out.close(),
  };
}
