import { Kysely } from 'kysely';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '../../util/logger.ts';
import { BaseWarehouse } from '../base-warehouse.ts';
import type { BookkeepingDb } from '../bookkeeping.ts';
import type { StagingBackend } from '../load-unit.ts';
import type { SqlRunner } from '../sql-runner.ts';
import { ident, literal } from '../values.ts';
import { duckdbAnalyticsSchema } from '../analytics-schema.ts';
import { acquireInstance, type InstanceSettings, releaseInstance } from './instance.ts';
import { DuckDBDialect } from './kysely-dialect.ts';
import { RunLock } from './lock.ts';
import { DuckDBSession } from './session.ts';
import { DuckDBStaging } from './staging.ts';

export class DuckDBWarehouse extends BaseWarehouse {
  readonly dialect = 'duckdb' as const;
  readonly inProcess = true;
  readonly description: string;
  protected readonly schemaName = 'main';
  readonly analyticsSchema = duckdbAnalyticsSchema;
  protected readonly migrationSchema = null;
  protected readonly db: Kysely<BookkeepingDb>;
  protected readonly migrationDb: Kysely<unknown>;
  private readonly sessions = new Set<DuckDBSession>();
  private readonly lock: RunLock;
  private closed = false;

  private constructor(
    private readonly path: string,
    private readonly instance: DuckDBInstance,
    private readonly main: DuckDBSession,
    private readonly readOnly: boolean,
    logger: Logger,
  ) {
    super(logger);
    this.description = path;
    this.lock = new RunLock(path, readOnly, logger);
    this.db = new Kysely<BookkeepingDb>({ dialect: new DuckDBDialect(main) });
    this.migrationDb = this.db as unknown as Kysely<unknown>;
  }

  static async open(target: string, logger: Logger, settings: InstanceSettings): Promise<DuckDBWarehouse> {
    const { path, instance, readOnly } = await acquireInstance(target, settings);
    try {
      const main = new DuckDBSession(await instance.connect());
      const warehouse = new DuckDBWarehouse(path, instance, main, readOnly, logger);
      if (await warehouse.hasAnalyticsSchema()) await warehouse.searchAnalytics();
      return warehouse;
    } catch (e) {
      releaseInstance(path);
      throw e;
    }
  }

  qualify(table: string): string {
    return `main.${ident(table)}`;
  }

  protected runner(): SqlRunner {
    return this.main;
  }

  protected transaction<T>(fn: (runner: SqlRunner) => Promise<T>): Promise<T> {
    return new DuckDBStaging(async () => this.main, this.compileBookkeeping).atomically(fn);
  }

  protected async openStaging(): Promise<StagingBackend> {
    // Each load unit gets its own connection: its TEMP staging tables and its transaction are its own.
    const connect = async (): Promise<DuckDBSession> => {
      const session = new DuckDBSession(await this.instance.connect());
      this.sessions.add(session);
      return session;
    };
    const release = (session: DuckDBSession): void => {
      this.sessions.delete(session);
      session.close();
    };
    return new DuckDBStaging(connect, this.compileBookkeeping, release);
  }

  /**
   * DuckDB's threads default to one per core, and a replay's normaliser and Appender calls need a core of their
   * own besides. Alternating replays on 2 cores, one DuckDB thread against two: medium won 7 of 8 pairs (4.5–5.6 s
   * against 5.0–5.9 s), large 5 of 6 (42.7–46.9 s against 45.7–53.2 s; the lost pair 64 s), both with ~10 % less
   * CPU. The thread count is DuckDB's global setting, restored afterwards for the final checkpoint and whatever runs next.
   */
  override async whileBulkLoading<T>(fn: () => Promise<T>): Promise<T> {
    const [row] = await this.query(`SELECT current_setting('threads') AS threads`);
    const threads = Number(row?.threads);
    if (!Number.isInteger(threads) || threads <= 1) return fn();
    await this.exec(`SET GLOBAL threads = ${threads - 1}`);
    const restore = (): Promise<void> => this.exec(`SET GLOBAL threads = ${threads}`);
    let result: T;
    try {
      result = await fn();
    } catch (e) {
      // The load's own error is the one to report, not a failure to restore after it.
      await restore().catch(() => undefined);
      throw e;
    }
    await restore();
    return result;
  }

  async exec(sql: string): Promise<void> {
    await this.main.run(sql);
  }

  private async hasAnalyticsSchema(): Promise<boolean> {
    const rows = await this.query(
      `SELECT 1 AS found FROM duckdb_schemas() WHERE database_name = current_database() AND schema_name = $1`,
      [this.analyticsSchema],
    );
    return rows.length > 0;
  }

  /**
   * Unqualified names resolve in `main`, then in the analytics schema: a model's SQL and a data test name models as
   * they name core tables. DuckDB refuses a search path naming a schema that does not exist yet.
   */
  private async searchAnalytics(): Promise<void> {
    await this.main.run(`SET search_path = ${literal(`main,${this.analyticsSchema}`)}`);
  }

  /**
   * Explicit BEGIN/COMMIT and a ROLLBACK on failure (DuckDB's views do not pin the tables they read). A model table
   * an older version built in `main` is dropped with it: views naming it unqualified now read the analytics one.
   */
  async replaceTable(name: string, select: string): Promise<void> {
    if (!(await this.hasAnalyticsSchema())) {
      await this.exec(`CREATE SCHEMA IF NOT EXISTS ${ident(this.analyticsSchema)}`);
      await this.searchAnalytics();
    }
    const stale = await this.query(
      `SELECT 1 AS found FROM information_schema.tables WHERE table_schema = 'main' AND table_name = $1 AND table_type = 'BASE TABLE'`,
      [name],
    );
    const table = this.qualifyModel(name);
    const dropStale = stale.length > 0 ? `DROP TABLE ${this.qualify(name)}; ` : '';
    try {
      await this.exec(
        `BEGIN TRANSACTION; ${dropStale}DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} AS ${select}; COMMIT`,
      );
    } catch (e) {
      await this.exec('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  async schemaTables(): Promise<Map<string, boolean>> {
    return this.tablesOf('main');
  }

  async modelTables(): Promise<Map<string, boolean>> {
    return this.tablesOf(this.analyticsSchema);
  }

  private async tablesOf(schema: string): Promise<Map<string, boolean>> {
    const rows = await this.query(
      `SELECT table_name, true AS readable FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = $1`,
      [schema],
    );
    return new Map(rows.map((r) => [String(r.table_name), r.readable === true]));
  }

  /** One process holds a DuckDB file: no reader of another process can hold a table. */
  protected waitingForLocks<T>(_what: string, _table: string, step: (lockTimeout: null) => Promise<T>): Promise<T> {
    return step(null);
  }

  /** Folds the WAL into the main file (it otherwise waits for 1 GB of WAL or close(); see instance.ts). */
  override async checkpoint(): Promise<void> {
    if (this.readOnly) return; // nothing was written, and DuckDB refuses the statement
    await this.main.run('CHECKPOINT');
  }

  async acquireLock(owner: string): Promise<void> {
    if (this.lock.taken) return;
    await this.lock.take(owner);
  }

  /** Opening the file locked it: the note (see acquireLock) only says who holds it. */
  nameHolder(owner: string): Promise<void> {
    return this.acquireLock(owner);
  }

  runLockHeld(): Promise<boolean> {
    return Promise.resolve(RunLock.heldHere(this.path));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.lock.release();
    for (const s of this.sessions) s.close();
    this.main.close();
    releaseInstance(this.path);
  }
}
