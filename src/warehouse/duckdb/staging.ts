import type { DuckDBAppender } from '@duckdb/node-api';
import type { CellValue, Row, TableDef } from '../../normalize/table-def.ts';
import { allColumns, sqlType } from '../ddl.ts';
import type { Staging, StagingBackend } from '../load-unit.ts';
import { seqColumn, type SqlStatement } from '../merge-sql.ts';
import type { SqlRunner } from '../sql-runner.ts';
import type { CommitPlan, StagedMerge } from '../types.ts';
import { ident } from '../values.ts';
import type { DuckDBSession } from './session.ts';

/** Strings (decimals, ISO timestamps, JSON text) are cast by the appender to the column type: no JS conversion. */
function appendCell(a: DuckDBAppender, v: CellValue | undefined): void {
  if (v === null || v === undefined) a.appendNull();
  else if (typeof v === 'string') a.appendVarchar(v);
  else if (typeof v === 'number') a.appendDouble(v);
  else if (typeof v === 'boolean') a.appendBoolean(v);
  else a.appendVarchar(v.toString());
}

let stagingCounter = 0;

/**
 * Staging in TEMP tables on the load unit's own DuckDB connection (invisible to others, gone when it closes),
 * filled with the Appender; merged by plain SQL on the same connection.
 */
export class DuckDBStaging implements StagingBackend {
  constructor(
    private readonly session: DuckDBSession,
    private readonly compileBookkeeping: (plan: CommitPlan) => SqlStatement[],
  ) {}

  qualify(table: string): string {
    return `main.${ident(table)}`;
  }

  bookkeeping(plan: CommitPlan): SqlStatement[] {
    return this.compileBookkeeping(plan);
  }

  async createStaging(table: TableDef, _mode: StagedMerge, columns: readonly string[]): Promise<string> {
    stagingCounter += 1;
    const name = `_gf_stg_${stagingCounter}`;
    const types = new Map(allColumns(table).map((c) => [c.name, sqlType('duckdb', c.type)]));
    const cols = columns.map((c) => `${ident(c)} ${types.get(c) ?? 'VARCHAR'}`);
    await this.session.run(`CREATE TEMP TABLE ${ident(name)} (${cols.join(', ')}, ${ident(seqColumn)} BIGINT)`);
    return `temp.main.${ident(name)}`;
  }

  writeBatch(staging: Staging, rows: readonly Row[]): Promise<void> {
    return this.session.exclusive(async () => {
      const bare = staging.name.slice('temp.main.'.length).replace(/^"|"$/g, '');
      const a = await this.session.connection.createAppender(bare, 'main', 'temp');
      try {
        const columns = staging.columns;
        let seq = staging.seq;
        for (const row of rows) {
          for (const c of columns) appendCell(a, row[c]);
          a.appendDouble(seq++);
          a.endRow();
        }
        a.flushSync();
      } finally {
        a.closeSync();
      }
    });
  }

  transaction<T>(fn: (runner: SqlRunner) => Promise<T>): Promise<T> {
    return this.session.exclusive(async () => {
      const runner: SqlRunner = { run: (sql, params) => this.session.runNow(sql, params) };
      await this.session.runNow('BEGIN TRANSACTION');
      try {
        const out = await fn(runner);
        await this.session.runNow('COMMIT');
        return out;
      } catch (e) {
        await this.session.runNow('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  async dropStaging(names: readonly string[]): Promise<void> {
    for (const n of names) await this.session.run(`DROP TABLE IF EXISTS ${n}`);
  }
}
