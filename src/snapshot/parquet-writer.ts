import type { ParquetCompression, ParquetFileInfo, SnapshotShape, ViewKeys, Warehouse } from '../warehouse/types.ts';
import { GrantflowError } from '../util/errors.ts';
import { snapshotSource } from './table-list.ts';
import type { PersonalDataMode } from '../config/settings.ts';
import { pseudonymTable, selectedColumns, type PersonalColumns } from '../privacy/personal-columns.ts';

export type { ParquetCompression, SnapshotShape, ViewKeys } from '../warehouse/types.ts';

/** Writes a warehouse table, named as a snapshot names it, to a Parquet file through the warehouse's export. */
export interface ParquetWriter {
  write(table: string, path: string): Promise<void>;
  /** Rows and column types as the written file declares them. */
  inspect(path: string): Promise<ParquetFileInfo>;
  close(): Promise<void>;
}

/** What a snapshot carries of personal data, and the declarations that say which columns hold it. */
export interface PersonalDataChoice {
  readonly mode: PersonalDataMode;
  readonly columns: PersonalColumns;
}

export async function openParquetWriter(
  warehouse: Warehouse,
  compression: ParquetCompression,
  viewKeys: ViewKeys,
  shape: SnapshotShape,
  personal?: PersonalDataChoice,
): Promise<ParquetWriter> {
  const out = await warehouse.openParquetExport(compression, viewKeys);
  return {
    async write(table, path) {
      // A model is read from the analytics schema, anything else from the warehouse's own (see snapshotSource).
      const found = await snapshotSource(warehouse, table);
      const source =
        found === null || personal === undefined || personal.mode === 'keep'
          ? found
          : {
              ...found,
              columns: selectedColumns(
                personal.columns,
                table,
                await tableColumns(warehouse, found.schema, table),
                personal.mode,
                warehouse.qualify(pseudonymTable),
              ),
            };
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

/** The columns of `schema.table`, in order. */
async function tableColumns(warehouse: Warehouse, schema: string, table: string): Promise<string[]> {
  const rows = await warehouse.query(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
    [schema, table],
  );
  return rows.map((r) => String(r.column_name));
}
