import { ResultReturnType, type DuckDBConnection } from '@duckdb/node-api';
import type { CellValue } from '../../normalize/table-def.ts';
import type { SqlRunner, ResultRow } from '../sql-runner.ts';
import { duckdbParams, rowsFromResult } from './results.ts';

/**
 * One DuckDB connection used by one caller at a time: DuckDB connections are not safe for concurrent
 * statements, and a transaction belongs to the connection, so callers queue here.
 */
export class DuckDBSession implements SqlRunner {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly connection: DuckDBConnection) {}

  /** Run `fn` with exclusive use of the connection. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Without queueing: only inside `exclusive`. */
  async runNow(sql: string, params: readonly CellValue[] = []): Promise<{ rows: ResultRow[]; changes: number }> {
    const result =
      params.length > 0 ? await this.connection.run(sql, duckdbParams(params)) : await this.connection.run(sql);
    const rows = result.returnType === ResultReturnType.QUERY_RESULT ? await rowsFromResult(result) : [];
    return { rows, changes: result.rowsChanged };
  }

  run(sql: string, params: readonly CellValue[] = []): Promise<{ rows: ResultRow[]; changes: number }> {
    return this.exclusive(() => this.runNow(sql, params));
  }

  close(): void {
    this.connection.closeSync();
  }
}
