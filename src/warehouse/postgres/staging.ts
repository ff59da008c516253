import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Row, TableDef } from '../../normalize/table-def.ts';
import { allColumns } from '../ddl.ts';
import { postgresSql } from './sql-dialect.ts';
import type { Staging, StagingBackend, TransactionAbout } from '../load-unit.ts';
import { seqColumn, type SqlStatement } from '../merge-sql.ts';
import type { SqlRunner } from '../sql-runner.ts';
import type { CommitPlan, StagedMerge } from '../types.ts';
import { copyText, ident } from '../values.ts';
import { inTransaction, isConnectionError, poolRunner } from './pool.ts';

/** Prefix of staging tables; leftovers of a crashed run are dropped when the next run takes the lock. */
export const stagingPrefix = '_gf_stg_';

/** COPY text of `rows`, produced in pieces of about 1 MB so a batch is never one huge string. */
function* copyChunks(staging: Staging, rows: readonly Row[]): Generator<string> {
  const columns = staging.columns;
  let seq = staging.seq;
  let buf = '';
  for (const row of rows) {
    let line = '';
    for (const c of columns) line += `${copyText(row[c] ?? null)}\t`;
    buf += `${line}${seq++}\n`;
    if (buf.length > 1 << 20) {
      yield buf;
      buf = '';
    }
  }
  if (buf) yield buf;
}

/**
 * Staging in UNLOGGED tables of the warehouse schema (not TEMP: they must outlive any one pooled connection,
 * and a commit that failed because its connection died can be retried from them). Filled with COPY FROM STDIN.
 */
export class PostgresStaging implements StagingBackend {
  readonly mergeStyle = 'on_conflict';
  private readonly unitId = randomBytes(4).toString('hex');
  private counter = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    private readonly compileBookkeeping: (plan: CommitPlan) => SqlStatement[],
    /** Runs last in every commit's transaction; throws to roll it back (the run lock is lost). */
    private readonly beforeCommit: (runner: SqlRunner) => Promise<void> = async () => undefined,
    /** Tries a transaction again while another session's lock holds it up (see PostgresWarehouse.waitingForLoad). */
    private readonly waitingForLocks: <T>(
      about: TransactionAbout,
      attempt: (lockTimeout: string | null) => Promise<T>,
    ) => Promise<T> = (_about, attempt) => attempt(null),
  ) {}

  qualify(table: string): string {
    return `${ident(this.schema)}.${ident(table)}`;
  }

  bookkeeping(plan: CommitPlan): SqlStatement[] {
    return this.compileBookkeeping(plan);
  }

  async createStaging(table: TableDef, _mode: StagedMerge, columns: readonly string[]): Promise<string> {
    this.counter += 1;
    const name = this.qualify(`${stagingPrefix}${this.unitId}_${this.counter}`);
    const types = new Map(allColumns(table).map((c) => [c.name, postgresSql.sqlType(c.type)]));
    const cols = columns.map((c) => `${ident(c)} ${types.get(c) ?? 'TEXT'}`);
    await poolRunner(this.pool).run(`CREATE UNLOGGED TABLE ${name} (${cols.join(', ')}, ${ident(seqColumn)} BIGINT)`);
    return name;
  }

  async writeBatch(staging: Staging, rows: readonly Row[]): Promise<void> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const cols = [...staging.columns, seqColumn].map(ident).join(', ');
      const sink = client.query(copyFrom(`COPY ${staging.name} (${cols}) FROM STDIN`));
      await pipeline(Readable.from(copyChunks(staging, rows)), sink);
    } catch (e) {
      if (isConnectionError(e)) broken = e as Error;
      throw e;
    } finally {
      client.release(broken);
    }
  }

  /**
   * An analyst's `LOCK TABLE`, `ALTER TABLE` or `VACUUM FULL` left open on a loaded table would make the merge wait
   * without end: under a `lock_timeout` the transaction rolls back whole and is tried again (the staging tables
   * stay), until the bound. The run lock is a session advisory lock taken before any load, on its own connection,
   * and waiting here takes no lock on it: the wait cannot deadlock with it.
   */
  transaction<T>(about: TransactionAbout, fn: (runner: SqlRunner) => Promise<T>): Promise<T> {
    return this.waitingForLocks(about, (lockTimeout) =>
      inTransaction(this.pool, async (runner) => {
        if (lockTimeout !== null) await runner.run(lockTimeout);
        const out = await fn(runner);
        await this.beforeCommit(runner);
        return out;
      }),
    );
  }

  /**
   * Loads take no statistics (see refreshStatistics), so staging tables have none and targets only those of an
   * earlier run or of autovacuum. Postgres then estimates a scope's live rows (parent range, parent list, not
   * deleted, not a reference) at ~1 row and picks a nested-loop anti join that scans the staging table once per
   * stored row: quadratic in the chunk. Without nested loops it hashes the staging table instead (one medium chunk
   * of notes: 207 ms → 5 ms). Only for these statements; the setting is restored after them.
   */
  async antiJoins(runner: SqlRunner, softDeletes: () => Promise<void>): Promise<void> {
    const { rows } = await runner.run(`SELECT current_setting('enable_nestloop') AS setting`);
    await runner.run(`SELECT set_config('enable_nestloop', 'off', true)`);
    await softDeletes();
    await runner.run(`SELECT set_config('enable_nestloop', $1, true)`, [String(rows[0]?.setting ?? 'on')]);
  }

  async dropStaging(names: readonly string[]): Promise<void> {
    await poolRunner(this.pool).run(`DROP TABLE IF EXISTS ${names.join(', ')}`);
  }
}
