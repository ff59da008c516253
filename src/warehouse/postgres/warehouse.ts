import { Kysely, sql } from 'kysely';
import { SchemaScopedPostgresDialect } from './kysely-dialect.ts';
import type pg from 'pg';
import type { Logger } from '../../util/logger.ts';
import { ConfigError } from '../../util/errors.ts';
import { BaseWarehouse } from '../base-warehouse.ts';
import * as bk from '../bookkeeping.ts';
import { bookkeepingTables } from '../bookkeeping-tables.ts';
import { currentViewName } from '../ddl.ts';
import type { CellValue, TableDef } from '../../normalize/table-def.ts';
import type { StagingBackend, TransactionAbout } from '../load-unit.ts';
import type { ResultRow, SqlRunner } from '../sql-runner.ts';
import type { ParquetCompression, ParquetExport, StatementResult, ViewKeys } from '../types.ts';
import { ident, literal } from '../values.ts';
import { analyzeStale } from './analyze-stale.ts';
import { checkSchemaAccess, schemaHoldsCredentials, unreadableTablesProblem, type SchemaAccess } from './privileges.ts';
import {
  defaultLockWait,
  lockHolders,
  lockTimeoutStatement,
  shorter,
  stoppingLockWait,
  WarehouseLockWaits,
  type LockWait,
} from './lock-wait.ts';
import { advisoryLockHeld, RunLock } from './lock.ts';
import { readStatement } from './read-statement.ts';
import { createPool, describeConnectError, inTransaction, poolRunner, safeUrl } from './pool.ts';
import { replaceTableSql } from './replace-table.ts';
import { analyticsSchemaFor } from '../analytics-schema.ts';
import { PostgresStaging, stagingPrefix } from './staging.ts';
import { SchemaNotYetCreated } from '../schema-not-yet-created.ts';
import { postgresSql } from './sql-dialect.ts';

export class PostgresWarehouse extends BaseWarehouse {
  readonly sqlDialect = postgresSql;
  readonly inProcess = false;
  /** Each schema has its own advisory lock: runs of other schemas of the database write beside this one. */
  readonly lockCoversDatabase = false;
  readonly description: string;
  protected readonly migrationSchema: string;
  readonly analyticsSchema: string;
  protected readonly db: Kysely<bk.BookkeepingDb>;
  protected readonly migrationDb: Kysely<unknown>;
  private readonly base: Kysely<bk.BookkeepingDb>;
  private readonly lock: RunLock;
  private closed = false;
  private readonly waits: WarehouseLockWaits;

  private constructor(
    private readonly url: string,
    protected readonly schemaName: string,
    private readonly pool: pg.Pool,
    logger: Logger,
    loadLockWait: LockWait,
    /** Opened for a command that writes: false for readers (status, snapshot, models test), whose role may only read. */
    private readonly writes: boolean,
    /** Aborted when the command is told to stop: a lock wait then ends at its next attempt (see withLockWait). */
    stop: AbortSignal | undefined,
  ) {
    super(logger);
    this.description = `${safeUrl(url)} (schema ${schemaName})`;
    this.lock = new RunLock(url, schemaName, this.description, logger);
    this.waits = new WarehouseLockWaits(() => poolRunner(pool), logger, loadLockWait, stop);
    this.migrationSchema = schemaName;
    this.analyticsSchema = analyticsSchemaFor(schemaName);
    this.base = new Kysely<bk.BookkeepingDb>({ dialect: new SchemaScopedPostgresDialect({ pool }, schemaName) });
    this.db = this.base.withSchema(schemaName);
    this.migrationDb = this.base as unknown as Kysely<unknown>;
  }

  /** Opened after checkSchemaAccess (privileges.ts): a missing grant is a ConfigError before anything is written. */
  static async open(
    url: string,
    schema: string,
    logger: Logger,
    options: {
      create?: boolean | 'check';
      writes?: boolean;
      loadLockWait?: LockWait;
      stop?: AbortSignal;
      /** The model tables the command rebuilds: with `writes`, the role must own them too. */
      models?: readonly string[];
    } = {},
  ): Promise<PostgresWarehouse> {
    const create = options.create ?? true;
    const writes = options.writes ?? create !== false;
    const pool = createPool(url, schema, logger);
    let access: SchemaAccess;
    try {
      access = await checkSchemaAccess(poolRunner(pool), schema, {
        create,
        writes,
        ...(options.models ? { models: options.models } : {}),
      });
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw describeConnectError(url, e);
    }
    if (!('ok' in access)) {
      await pool.end().catch(() => undefined);
      if ('notYet' in access) throw new SchemaNotYetCreated(`${safeUrl(url)} ${access.notYet}`);
      throw new ConfigError(`${safeUrl(url)} ${access.problem}`);
    }
    const loadLockWait = options.loadLockWait ?? defaultLockWait;
    return new PostgresWarehouse(url, schema, pool, logger, loadLockWait, writes, options.stop);
  }

  /** Whether the schema holds a stored pair for `site` (see schemaHoldsCredentials), found without creating anything. */
  static async holdsCredentials(url: string, schema: string, site: string | null, logger: Logger): Promise<boolean> {
    const pool = createPool(url, schema, logger);
    try {
      return await schemaHoldsCredentials(poolRunner(pool), schema, site);
    } catch (e) {
      throw describeConnectError(url, e);
    } finally {
      await pool.end().catch(() => undefined);
    }
  }

  qualify(table: string): string {
    return `${ident(this.schemaName)}.${ident(table)}`;
  }

  protected runner(): SqlRunner {
    return poolRunner(this.pool);
  }

  protected transaction<T>(fn: (runner: SqlRunner) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (runner) => {
      const out = await fn(runner);
      await this.assertLock(runner);
      return out;
    });
  }

  protected async openStaging(): Promise<StagingBackend> {
    return new PostgresStaging(
      this.pool,
      this.schemaName,
      this.compileBookkeeping,
      this.assertLock,
      this.waitingForLoad,
    );
  }

  /**
   * A load transaction held up by another session's lock on a table it writes (an analyst's `LOCK TABLE`,
   * `ALTER TABLE`, `VACUUM FULL`, `CREATE INDEX`): tried again as model rebuilds are, and given up after the bound,
   * rolled back whole. Its caller fails the run (the next one loads it again); a load after one that gave up waits
   * no longer, so a run with many loads behind the same lock still ends within the bound.
   */
  private waitingForLoad = <T>(about: TransactionAbout, attempt: (lockTimeout: string) => Promise<T>): Promise<T> =>
    this.waits.bounded(about.what, about.tables, attempt, {
      kind: 'load',
      gaveUpAs: `${about.what} rolled back, nothing of it committed`,
    });

  /** Last before every COMMIT, and before run records and models are written: see RunLock. */
  private assertLock = (runner?: SqlRunner): Promise<void> => this.lock.assertHeld(runner);

  /** A reader without SELECT on one of grantflow's tables is told so (see unreadableTablesProblem). */
  override async needsMigration(tables: readonly TableDef[]): Promise<boolean> {
    const ours = [...tables, ...bookkeepingTables].map((t) => t.name);
    ours.push('_grantflow_migrations', '_grantflow_migrations_lock');
    // The views of current rows too: information_schema hides one the role may not read, which reads as missing.
    for (const t of tables) {
      const view = currentViewName(t);
      if (view !== null) ours.push(view);
    }
    const problem = await unreadableTablesProblem(poolRunner(this.pool), this.schemaName, ours);
    if (problem !== null) throw new ConfigError(`${safeUrl(this.url)} ${problem}`);
    return super.needsMigration(tables);
  }

  readStatement(sql: string): Promise<StatementResult> {
    return readStatement(this.pool, sql);
  }

  /** A bookkeeping read or write (bookkeeping.ts) on `table`, bounded as a load is (see waitingForLoad). */
  protected override bookkeeping<T>(
    what: string,
    table: string,
    fn: (db: bk.BookkeepingKysely) => Promise<T>,
    final = false,
  ): Promise<T> {
    // A run's final record waits on after a stop under a short bound (stoppingLockWait): the command still ends
    // promptly, and the run is not left `running`.
    const afterStop = final ? shorter(stoppingLockWait, this.waits.loadWait) : undefined;
    return this.waits.bounded(
      what,
      [this.qualify(table)],
      (lockTimeout) =>
        this.db.transaction().execute(async (trx) => {
          await sql.raw(lockTimeout).execute(trx);
          return fn(trx);
        }),
      afterStop ? { afterStop } : {},
    );
  }

  protected override beforeRunRecord(): Promise<void> {
    return this.assertLock();
  }

  /**
   * Bounded as above (a fan-out reads its parent table through here, a Postgres snapshot every table it writes): the
   * holders are looked up among the schema's tables (knownTables), as the statement's own are not parsed out of it.
   */
  override query(text: string, params: readonly CellValue[] = []): Promise<ResultRow[]> {
    return this.waits.bounded('a query of the warehouse', this.knownTables, (lockTimeout) =>
      inTransaction(this.pool, async (runner) => {
        await runner.run(lockTimeout);
        return (await runner.run(text, params)).rows;
      }),
    );
  }

  /**
   * The tables a query may read, for naming who holds the one it waits for: grantflow's own first, then the rest of
   * the schema, which holds the model tables (a snapshot reads them) and analysts' own.
   */
  private knownTables = async (): Promise<string[]> => {
    const ours = [...this.catalogTables(), ...bookkeepingTables.map((t) => t.name)];
    const { rows } = await poolRunner(this.pool).run(
      'SELECT schemaname, tablename FROM pg_tables WHERE (schemaname = $1 AND NOT (tablename = ANY($2::text[]))) ' +
        'OR schemaname = $3 ORDER BY schemaname = $3, tablename',
      [this.schemaName, `{${ours.map((t) => `"${t}"`).join(',')}}`, this.analyticsSchema],
    );
    return [
      ...ours.map((t) => this.qualify(t)),
      ...rows.map((r) => `${ident(String(r.schemaname))}.${ident(String(r.tablename))}`),
    ];
  };

  /**
   * One ANALYZE per stale table at the end of a run, outside any load transaction, two at a time (a large replay's
   * 2.3 s → 1.2 s on two cores). Inside every commit they cost more (medium 6.4 → 5.4 s, large 62 → 55 s without
   * them) and are no longer needed there: the soft deletes' anti joins do not depend on estimates (see
   * PostgresStaging.antiJoins). Statistics are optional: a table another session holds locked (an analyst's
   * `LOCK TABLE`, a manual VACUUM) gets one attempt, then is skipped with a warning naming the holder, and the run
   * goes on; still stale, it is analyzed by the next run.
   */
  override async refreshStatistics(): Promise<string[]> {
    const runner = poolRunner(this.pool);
    return analyzeStale(
      runner,
      this.catalogTables().map((t) => this.qualify(t)),
      2,
      {
        lockTimeout: lockTimeoutStatement(this.waits.loadWait),
        skipped: async (table) => {
          const { holders } = await lockHolders(runner, [table]);
          this.logger.warn(
            { table, holders },
            `statistics of ${table} not refreshed: its lock is held by ${holders}; the next run analyzes it`,
          );
        },
      },
    );
  }

  /**
   * A data test's query: the search path narrowed to the schema for its transaction only, and bounded as `query` is.
   * Once one gave up, later ones of the command try once: each data test of a locked table would wait the bound.
   */
  override queryOwnTables(text: string): Promise<ResultRow[]> {
    return this.waits.bounded(
      "a data test's query",
      this.knownTables,
      (lockTimeout) =>
        inTransaction(this.pool, async (runner) => {
          await runner.run(lockTimeout);
          const path = `${ident(this.schemaName)},${ident(this.analyticsSchema)}`;
          await runner.run(`SELECT set_config('search_path', ${literal(path)}, true)`);
          return (await runner.run(text)).rows;
        }),
      { kind: 'data test' },
    );
  }

  async replaceTable(
    name: string,
    select: string,
    what: string,
    wait?: LockWait,
    primaryKey: readonly string[] = [],
  ): Promise<void> {
    await this.createAnalyticsSchema();
    const sql = replaceTableSql(name, select, this.schemaName, this.analyticsSchema, primaryKey);
    // The lock waited for is the model's, in the analytics schema (execExclusive would name the main schema's).
    await this.waitingForLocks(
      what,
      this.qualifyModel(name),
      (lockTimeout) => this.exec(`${lockTimeout}; ${sql}`),
      wait,
    );
  }

  /**
   * Created by the first model run (checkSchemaAccess told a role that may not create it before anything was
   * written). Not `CREATE SCHEMA IF NOT EXISTS` alone: that needs CREATE on the database even when the schema exists.
   */
  private async createAnalyticsSchema(): Promise<void> {
    const runner = poolRunner(this.pool);
    const { rows } = await runner.run('SELECT 1 AS found FROM pg_namespace WHERE nspname = $1', [this.analyticsSchema]);
    if (rows.length > 0) return;
    // Another run may create it between the check and here (see checkSchemaAccess): it then exists, which is all.
    await runner.run(`CREATE SCHEMA IF NOT EXISTS ${ident(this.analyticsSchema)}`).catch((e: unknown) => {
      if ((e as { code?: string }).code !== '23505') throw e;
    });
  }

  /** pg_class lists every table, readable or not (information_schema only those the role holds a privilege on). */
  protected async tablesOf(schema: string): Promise<Map<string, boolean>> {
    const rows = await this.query(
      `SELECT c.relname AS table_name,
              has_table_privilege(c.oid, 'SELECT') AND has_schema_privilege(n.oid, 'USAGE') AS readable
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`,
      [schema],
    );
    return new Map(rows.map((r) => [String(r.table_name), r.readable === true]));
  }

  /**
   * One multi-statement text is one implicit transaction (an explicit BEGIN would leave a pooled connection in an
   * aborted transaction on failure); dropping a view an analyst's open transaction reads waits as model rebuilds do.
   */
  async execInTransaction(statements: readonly string[], table: string, what: string): Promise<void> {
    if (statements.length === 0) return;
    await this.execExclusive(statements.join(';\n'), table, what);
  }

  async exec(sql: string): Promise<void> {
    await this.assertLock();
    await poolRunner(this.pool).run(sql);
  }

  protected waitingForLocks<T>(
    what: string,
    table: string,
    step: (lockTimeout: string) => Promise<T>,
    wait = defaultLockWait,
  ): Promise<T> {
    return this.waits.wait(what, table, step, wait);
  }

  async acquireLock(owner: string): Promise<void> {
    if (this.lock.taken) return;
    await this.lock.take(owner);
    // A reader leaves them to the next sync: its role may not drop tables, and it writes none of its own.
    if (this.writes) await this.dropLeftoverStaging();
  }

  /** Readers and writers never shut each other out here: there is no holder to name. */
  async nameHolder(): Promise<void> {}

  runLockHeld(): Promise<boolean> {
    return advisoryLockHeld(poolRunner(this.pool), this.schemaName);
  }

  /** Staging tables of a run that crashed: only the lock holder may drop them, as no other run can be loading. */
  private async dropLeftoverStaging(): Promise<void> {
    const { rows } = await poolRunner(this.pool).run(
      `SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename LIKE ${literal(`${stagingPrefix}%`)}`,
      [this.schemaName],
    );
    if (rows.length === 0) return;
    await this.exec(`DROP TABLE IF EXISTS ${rows.map((r) => this.qualify(String(r.tablename))).join(', ')}`);
    this.logger.info({ tables: rows.length }, 'dropped staging tables left by an interrupted run');
  }

  /** Loads DuckDB, which writes the files, only when a snapshot is written. */
  async openParquetExport(compression: ParquetCompression, viewKeys: ViewKeys = {}): Promise<ParquetExport> {
    const { PostgresParquetExport } = await import('./parquet-export.ts');
    return PostgresParquetExport.open(this, compression, viewKeys);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.lock.release();
    await this.base.destroy(); // ends the pool, if Kysely ever used it
    // Kysely ends only a pool it has initialised; one used only by raw queries would keep the process alive for its
    // idle timeout (a refused lock took 10 s to exit).
    if (!this.pool.ended) await this.pool.end().catch(() => undefined);
  }
}
