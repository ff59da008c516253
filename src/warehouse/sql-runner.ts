import type { CellValue } from '../normalize/table-def.ts';

export type ResultRow = Record<string, CellValue>;

/** One session (connection) that runs SQL with `$1, $2…` parameters; results already in the shared value formats. */
export interface SqlRunner {
  run(sql: string, params?: readonly CellValue[]): Promise<{ rows: ResultRow[]; changes: number }>;
}
