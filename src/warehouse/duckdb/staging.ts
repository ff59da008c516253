import type { DuckDBAppender } from '@duckdb/node-api';
import type { CellValue, Row, TableDef } from '../../normalize/table-def.ts';
import { allColumns } from '../ddl.ts';
import { duckdbSql } from './sql-dialect.ts';
import type { Staging, StagingBackend, TransactionAbout } from '../load-unit.ts';
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
  readonly mergeStyle = 'update_insert';
  private current: DuckDBSession | null = null;

  /** `connect` opens the unit's connection on first use; `release` closes it when nothing is staged. */
  constructor(
    private readonly connect: () => Promise<DuckDBSession>,
    private readonly compileBookkeeping: (plan: CommitPlan) => SqlStatement[],
    private readonly onRelease?: (session: DuckDBSession) => void,
    /** The schema of the warehouse's tables (`main`, or a portfolio site's). */
    private readonly schema = 'main',
  ) {}

  private async session(): Promise<DuckDBSession> {
    this.current ??= await this.connect();
    return this.current;
  }

  async release(): Promise<void> {
    const s = this.current;
    this.current = null;
    if (s && this.onRelease) this.onRelease(s);
  }

  qualify(table: string): string {
    return `${ident(this.schema)}.${ident(table)}`;
  }

  bookkeeping(plan: CommitPlan): SqlStatement[] {
    return this.compileBookkeeping(plan);
  }

  async createStaging(table: TableDef, _mode: StagedMerge, columns: readonly string[]): Promise<string> {
    stagingCounter += 1;
    const name = `_gf_stg_${stagingCounter}`;
    const types = new Map(allColumns(table).map((c) => [c.name, duckdbSql.sqlType(c.type)]));
    const cols = columns.map((c) => `${ident(c)} ${types.get(c) ?? 'VARCHAR'}`);
    const session = await this.session();
    await session.run(`CREATE TEMP TABLE ${ident(name)} (${cols.join(', ')}, ${ident(seqColumn)} BIGINT)`);
    return `temp.main.${ident(name)}`;
  }

  async writeBatch(staging: Staging, rows: readonly Row[]): Promise<void> {
    const session = await this.session();
    return session.exclusive(async () => {
      const bare = staging.name.slice('temp.main.'.length).replace(/^"|"$/g, '');
      const a = await session.connection.createAppender(bare, 'main', 'temp');
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

  /** DuckDB has no lock to wait for: one attempt. */
  transaction<T>(_about: TransactionAbout, fn: (runner: SqlRunner) => Promise<T>): Promise<T> {
    return this.atomically(fn);
  }

  async atomically<T>(fn: (runner: SqlRunner) => Promise<T>): Promise<T> {
    const session = await this.session();
    return session.exclusive(async () => {
      const runner: SqlRunner = { run: (sql, params) => session.runNow(sql, params) };
      await session.runNow('BEGIN TRANSACTION');
      try {
        const out = await fn(runner);
        await session.runNow('COMMIT');
        return out;
      } catch (e) {
        await session.runNow('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  async dropStaging(names: readonly string[]): Promise<void> {
    const session = await this.session();
    for (const n of names) await session.run(`DROP TABLE IF EXISTS ${n}`);
  }
}
