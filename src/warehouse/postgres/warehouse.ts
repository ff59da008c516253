import { Kysely, sql } from 'kysely';
import { SchemaScopedPostgresDialect } from './schema-introspector.ts';
import type pg from 'pg';
import type { Logger } from '../../util/logger.ts';
import { ConfigError, ExitCode, GrantflowError } from '../../util/errors.ts';
import { BaseWarehouse } from '../base-warehouse.ts';
import * as bk from '../bookkeeping.ts';
import { bookkeepingTables } from '../bookkeeping-tables.ts';
import type { CellValue, TableDef } from '../../normalize/table-def.ts';
import type { JsonValue } from '../../util/json.ts';
import type { StagingBackend, TransactionAbout } from '../load-unit.ts';
import type { ResultRow, SqlRunner } from '../sql-runner.ts';
import type { RunRecord, StoredCredentials } from '../types.ts';
import { ident, literal } from '../values.ts';
import { analyzeStale } from './analyze-stale.ts';
import { unownedTablesProblem } from './ownership.ts';
import {
  defaultLockWait,
  lockHolders,
  lockTimeoutStatement,
  shorter,
  stoppingLockWait,
  withLockWait,
  type LockWait,
} from './lock-wait.ts';
import { advisoryLockHeld, holdsAdvisoryLock, takeAdvisoryLock } from './lock.ts';
import { createPool, describeConnectError, inTransaction, poolRunner, safeUrl } from './pool.ts';
import { replaceTableSql } from './replace-table.ts';
import { PostgresStaging, stagingPrefix } from './staging.ts';

/**
 * `open` in `create: 'check'` mode (doctor) found no schema, which the role may create: all is ready for a first
 * sync, which creates it; checking created nothing.
 */
export class SchemaNotYetCreated extends GrantflowError {
  constructor(message: string) {
    super(message, ExitCode.ok, 'schema_not_yet_created');
  }
}

/** Who holds a lock that a load or a bookkeeping write waits for (see withLockWait's `holdsIt`). */
const writeBlockers = 'the session holding it (LOCK TABLE, ALTER TABLE, VACUUM FULL, CREATE INDEX)';

export class PostgresWarehouse extends BaseWarehouse {
  readonly dialect = 'postgres' as const;
  readonly inProcess = false;
  readonly description: string;
  protected readonly migrationSchema: string;
  protected readonly db: Kysely<bk.BookkeepingDb>;
  protected readonly migrationDb: Kysely<unknown>;
  private readonly base: Kysely<bk.BookkeepingDb>;
  private lockClient: pg.Client | null = null;
  private lockPid = 0;
  /** Set when the lock's session ends while the warehouse is open: from then on, nothing is written. */
  private lockLost: GrantflowError | null = null;
  private closed = false;
  /**
   * Kinds of bounded work (loads, data tests) of which one gave up waiting for a lock: later ones of the kind try
   * once, so a command with many of them behind the same lock still ends within one bound.
   */
  private readonly gaveUp = new Set<string>();

  private constructor(
    private readonly url: string,
    protected readonly schemaName: string,
    private readonly pool: pg.Pool,
    logger: Logger,
    private readonly loadLockWait: LockWait,
    /** Opened for a command that writes: false for readers (status, snapshot, models test), whose role may only read. */
    private readonly writes: boolean,
    /** Aborted when the command is told to stop: a lock wait then ends at its next attempt (see withLockWait). */
    private readonly stop: AbortSignal | undefined,
  ) {
    super(logger);
    this.description = `${safeUrl(url)} (schema ${schemaName})`;
    this.migrationSchema = schemaName;
    this.base = new Kysely<bk.BookkeepingDb>({ dialect: new SchemaScopedPostgresDialect({ pool }, schemaName) });
    this.db = this.base.withSchema(schemaName);
    this.migrationDb = this.base as unknown as Kysely<unknown>;
  }

  /**
   * `create: false` (commands on a synced warehouse): a missing schema is reported, not created. With `writes`
   * (`create`, or a command that rebuilds models), the role must
   * be able to create tables in the schema (migrations, staging tables), and to create the schema if it is missing;
   * either lacking is a ConfigError naming the grant, before anything is written; so are grantflow tables in it
   * another role owns, the `models` it rebuilds included (see unownedTablesProblem). A schema that exists is not
   * created again: `CREATE SCHEMA IF NOT EXISTS` needs CREATE on the database even then, which a role given only
   * its own schema on a shared database lacks.
   */
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
    let problem: string | null = null;
    let notYet: string | null = null;
    try {
      const { rows } = await poolRunner(pool).run(
        `SELECT current_user AS role, current_database() AS db, n.oid IS NOT NULL AS found,
           has_database_privilege(current_database(), 'CREATE') AS may_create_schema,
           n.oid IS NOT NULL AND has_schema_privilege(n.oid, 'USAGE') AS may_use,
           n.oid IS NOT NULL AND has_schema_privilege(n.oid, 'USAGE') AND has_schema_privilege(n.oid, 'CREATE')
             AS may_create_tables
         FROM (SELECT 1) AS one LEFT JOIN pg_namespace n ON n.nspname = $1`,
        [schema],
      );
      const r = rows[0] ?? {};
      const role = ident(String(r.role));
      if (!create && r.found !== true) {
        problem = `has no schema ${schema}; check --schema, or run \`grantflow sync\` first`;
      } else if (!writes && r.may_use !== true) {
        // Without USAGE the schema drops out of the search path: tables would read as missing, not as refused.
        problem =
          `schema ${schema}: role ${String(r.role)} may not use it; ` +
          `grant it (GRANT USAGE ON SCHEMA ${ident(schema)} TO ${role}); README.md, "Postgres privileges", lists what each command needs`;
      } else if (!writes) {
        // Read only: SELECT on the tables is all it needs, and a query without it says so (42501, see runAction).
      } else if (r.found !== true && r.may_create_schema !== true) {
        problem =
          `has no schema ${schema} and role ${String(r.role)} may not create one in database ${String(r.db)}; ` +
          `have it created for grantflow (CREATE SCHEMA ${ident(schema)} AUTHORIZATION ${role}), or pick an existing schema with --schema`;
      } else if (r.found !== true && create === 'check') {
        notYet = `has no schema ${schema} yet; the first sync creates it (role ${String(r.role)} may create schemas in database ${String(r.db)})`;
      } else if (r.found !== true) {
        // Another sync starting at the same moment may create it between the check and here: IF NOT EXISTS does not
        // cover that race (unique_violation on pg_namespace); it then exists, and the run lock decides who runs.
        await poolRunner(pool)
          .run(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`)
          .catch((e: unknown) => {
            if ((e as { code?: string }).code !== '23505') throw e;
          });
      } else if (r.may_create_tables !== true) {
        problem =
          `schema ${schema}: role ${String(r.role)} may not create tables in it; ` +
          `grant it (GRANT USAGE, CREATE ON SCHEMA ${ident(schema)} TO ${role}), or give grantflow a schema of its own with --schema`;
      } else {
        problem = await unownedTablesProblem(poolRunner(pool), schema, String(r.role), options.models);
      }
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw describeConnectError(url, e);
    }
    if (problem !== null || notYet !== null) {
      await pool.end().catch(() => undefined);
      if (notYet !== null) throw new SchemaNotYetCreated(`${safeUrl(url)} ${notYet}`);
      throw new ConfigError(`${safeUrl(url)} ${problem}`);
    }
    return new PostgresWarehouse(
      url,
      schema,
      pool,
      logger,
      options.loadLockWait ?? defaultLockWait,
      writes,
      options.stop,
    );
  }

  /**
   * Whether the schema holds a stored credential pair for `site`, read without creating anything (false when the
   * schema or its credentials table does not exist yet): a sync with GRANTFLOW_* credentials checks them before it
   * creates any table when there is no newer pair to use instead.
   */
  static async holdsCredentials(url: string, schema: string, site: string | null, logger: Logger): Promise<boolean> {
    const pool = createPool(url, schema, logger);
    try {
      const runner = poolRunner(pool);
      const table = `${ident(schema)}.${ident('_grantflow_credentials')}`;
      // A schema or table the role may not read: it cannot be told here, and `open` names the missing grant (a
      // permission error here would read as "cannot connect").
      const { rows } = await runner.run(
        `SELECT n.oid IS NOT NULL AS schema_found, n.oid IS NOT NULL AND has_schema_privilege(n.oid, 'USAGE') AS usable
           FROM (SELECT 1) AS one LEFT JOIN pg_namespace n ON n.nspname = $1`,
        [schema],
      );
      if (rows[0]?.schema_found !== true) return false;
      if (rows[0]?.usable !== true) return true;
      const found = await runner.run(
        `SELECT to_regclass($1) IS NOT NULL AS found, to_regclass($1) IS NOT NULL AND has_table_privilege(to_regclass($1), 'SELECT') AS readable`,
        [table],
      );
      if (found.rows[0]?.found !== true) return false;
      if (found.rows[0]?.readable !== true) return true;
      // null: a pair of any site (one that moved keeps the pair stored for its old address, see runSync).
      if (site === null) return (await runner.run(`SELECT 1 FROM ${table} LIMIT 1`)).rows.length > 0;
      return (await runner.run(`SELECT 1 FROM ${table} WHERE site = $1`, [site])).rows.length > 0;
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
    this.bounded(about.what, about.tables, attempt, {
      kind: 'load',
      gaveUpAs: `${about.what} rolled back, nothing of it committed`,
    });

  /**
   * The run lock is a session's advisory lock: when that session ends (pg_terminate_backend, idle_session_timeout,
   * a restart, a network cut), Postgres frees the lock and another sync may take the schema, see this run still
   * `running`, resume it and drop its staging tables. So once the lock was taken, every transaction checks, last
   * before its COMMIT, that the lock session still holds it, and run records and models are not written once it
   * is known lost: the run fails (exit 1) instead of writing alongside another one. Without a lock (tests,
   * commands that take none) nothing is checked.
   */
  private assertLock = async (runner?: SqlRunner): Promise<void> => {
    const client = this.lockClient;
    if (!client) return;
    if (!this.lockLost && runner && !(await holdsAdvisoryLock(runner, this.schemaName, this.lockPid))) {
      this.lockLost ??= this.lockLostError('the lock is no longer held'); // the session's own error may come first
    }
    if (this.lockLost) throw this.lockLost;
  };

  private lockLostError(reason: string): GrantflowError {
    return new GrantflowError(
      `lost the run lock on ${this.description}: its Postgres session ended (${reason}), so another run may hold ` +
        'the warehouse now; stopped writing to it. Rerun to continue',
      ExitCode.runFailed,
      'lock_lost',
    );
  }

  /**
   * A statement outside load transactions (the run's record, a stream's state, the parents a fan-out reads) meets
   * another session's lock (`LOCK TABLE`, `ALTER TABLE`, `VACUUM FULL`) as a load does: it is tried in attempts under
   * `lock_timeout`, logging who holds the table, and gives up after the loads' bound (or at a stop) naming them,
   * instead of waiting without end. `step` runs in a transaction of its own, given the statement that bounds it.
   */
  private async bounded<T>(
    what: string,
    tables: readonly string[] | (() => Promise<readonly string[]>),
    step: (lockTimeout: string) => Promise<T>,
    options: { kind?: string; gaveUpAs?: string; afterStop?: LockWait } = {},
  ): Promise<T> {
    const once = options.kind !== undefined && this.gaveUp.has(options.kind);
    const wait = once ? { ...this.loadLockWait, totalMs: 0 } : this.loadLockWait;
    try {
      return await this.waitOnPool(what, tables, step, wait, writeBlockers, options.afterStop);
    } catch (e) {
      if (!(e instanceof GrantflowError) || e.code !== 'lock_wait') throw e;
      if (options.kind !== undefined) this.gaveUp.add(options.kind);
      throw new GrantflowError(`${options.gaveUpAs ?? what}: ${e.message}`, e.exitCode, e.code);
    }
  }

  /**
   * information_schema hides a table the role may not read: a reader without SELECT on one of grantflow's tables
   * would take it for missing, and `models test` would ask for CREATE to migrate it. The missing SELECT is named
   * instead (pg_class lists every table, readable or not).
   */
  override async needsMigration(tables: readonly TableDef[]): Promise<boolean> {
    const ours = [...tables, ...bookkeepingTables].map((t) => t.name);
    ours.push('_grantflow_migrations', '_grantflow_migrations_lock');
    const { rows } = await poolRunner(this.pool).run(
      `SELECT c.relname, current_user AS role FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = ANY($2::text[]) AND NOT has_table_privilege(c.oid, 'SELECT')
        ORDER BY c.relname`,
      [this.schemaName, `{${ours.join(',')}}`],
    );
    const first = rows[0];
    if (first) {
      const role = String(first.role);
      const more = rows.length > 1 ? ` (and ${rows.length - 1} more of its tables)` : '';
      throw new ConfigError(
        `${safeUrl(this.url)} schema ${this.schemaName}: role ${role} may not read table ${String(first.relname)}` +
          `${more}; grant it (GRANT SELECT ON ALL TABLES IN SCHEMA ${ident(this.schemaName)} TO ${ident(role)}); ` +
          'README.md, "Postgres privileges", lists what each command needs',
      );
    }
    return super.needsMigration(tables);
  }

  /** A bookkeeping read or write (bookkeeping.ts) on `table`, bounded as above. */
  private bookkeeping<T>(
    what: string,
    table: string,
    fn: (db: bk.BookkeepingKysely) => Promise<T>,
    afterStop?: LockWait,
  ): Promise<T> {
    return this.bounded(
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

  override readState(stream: string): Promise<JsonValue | null> {
    return this.bookkeeping(`reading the state of stream ${stream}`, '_grantflow_streams', (db) =>
      bk.readState(db, stream),
    );
  }

  override readParentMarks(stream: string): Promise<Map<string, string | null>> {
    return this.bookkeeping(`reading the parents stream ${stream} has read`, '_grantflow_parents', (db) =>
      bk.readParentMarks(db, stream),
    );
  }

  /**
   * A run's final record (how it ended) is still written after a stop: given up at once, the run would stay
   * `running`. So it waits on for a lock under a short bound (stoppingLockWait), and the command still ends promptly.
   */
  override async saveRun(run: RunRecord): Promise<void> {
    await this.assertLock();
    const final = run.status !== 'running';
    await this.bookkeeping(
      `saving the record of run ${run.runId}`,
      '_grantflow_runs',
      (db) => bk.saveRun(db, run),
      final ? shorter(stoppingLockWait, this.loadLockWait) : undefined,
    );
  }

  override listRuns(limit: number): Promise<RunRecord[]> {
    return this.bookkeeping('reading the runs', '_grantflow_runs', (db) => bk.listRuns(db, limit));
  }

  override readCredentials(site: string): Promise<StoredCredentials | null> {
    return this.bookkeeping('reading the stored credentials', '_grantflow_credentials', (db) =>
      bk.readCredentials(db, site),
    );
  }

  // writeCredentials is not bounded: the site has already replaced the refresh token, so giving up would lose the
  // only working pair; it waits for a lock on its tiny table as long as it takes (a second signal still exits).

  /**
   * Bounded as above (a fan-out reads its parent table through here, a Postgres snapshot every table it writes): the
   * holders are looked up among the schema's tables (knownTables), as the statement's own are not parsed out of it.
   */
  override query(text: string, params: readonly CellValue[] = []): Promise<ResultRow[]> {
    return this.bounded('a query of the warehouse', this.knownTables, (lockTimeout) =>
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
      'SELECT tablename FROM pg_tables WHERE schemaname = $1 AND NOT (tablename = ANY($2::text[])) ORDER BY tablename',
      [this.schemaName, `{${ours.map((t) => `"${t}"`).join(',')}}`],
    );
    return [...ours, ...rows.map((r) => String(r.tablename))].map((t) => this.qualify(t));
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
        lockTimeout: lockTimeoutStatement(this.loadLockWait),
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
    return this.bounded(
      "a data test's query",
      this.knownTables,
      (lockTimeout) =>
        inTransaction(this.pool, async (runner) => {
          await runner.run(lockTimeout);
          await runner.run(`SELECT set_config('search_path', ${literal(ident(this.schemaName))}, true)`);
          return (await runner.run(text)).rows;
        }),
      { kind: 'data test' },
    );
  }

  replaceTable(name: string, select: string, what: string, wait?: LockWait): Promise<void> {
    return this.execExclusive(replaceTableSql(name, select), name, what, wait);
  }

  /** pg_class lists every table, readable or not (information_schema only those the role holds a privilege on). */
  async schemaTables(): Promise<Map<string, boolean>> {
    const rows = await this.query(
      `SELECT c.relname AS table_name, has_table_privilege(c.oid, 'SELECT') AS readable
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`,
    );
    return new Map(rows.map((r) => [String(r.table_name), r.readable === true]));
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
    return this.waitOnPool(what, table, step, wait);
  }

  /**
   * withLockWait on this warehouse's pool, logger and stop signal: `step` is given the `lock_timeout` statement of
   * one attempt. `holdsIt` names who typically holds the lock (default: a reader's open transaction).
   */
  private waitOnPool<T>(
    what: string,
    table: string | readonly string[] | (() => Promise<readonly string[]>),
    step: (lockTimeout: string) => Promise<T>,
    wait: LockWait,
    holdsIt?: string,
    afterStop?: LockWait,
  ): Promise<T> {
    return withLockWait((inForce) => step(lockTimeoutStatement(inForce)), {
      what,
      table,
      runner: poolRunner(this.pool),
      logger: this.logger,
      wait,
      ...(holdsIt === undefined ? {} : { holdsIt }),
      ...(afterStop === undefined ? {} : { afterStop }),
      signal: this.stop,
    });
  }

  async acquireLock(owner: string): Promise<void> {
    if (this.lockClient) return;
    const { client, pid } = await takeAdvisoryLock(this.url, this.schemaName, owner);
    const lost = (reason: string): void => {
      if (this.closed || this.lockLost) return;
      this.lockLost = this.lockLostError(reason);
      this.logger.error({ err: reason }, 'the run lock was lost: writing stops');
    };
    client.on('error', (e: Error) => lost(e.message.split('\n')[0] ?? ''));
    client.on('end', () => lost('connection closed'));
    this.lockClient = client;
    this.lockPid = pid;
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.lockClient) await this.lockClient.end().catch(() => undefined);
    this.lockClient = null;
    await this.base.destroy(); // ends the pool, if Kysely ever used it
    // Kysely ends only a pool it has initialised; one used only by raw queries would keep the process alive for its
    // idle timeout (a refused lock took 10 s to exit).
    if (!this.pool.ended) await this.pool.end().catch(() => undefined);
  }
}
