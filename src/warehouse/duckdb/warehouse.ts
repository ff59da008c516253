import { Kysely } from 'kysely';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '../../util/logger.ts';
import { ConfigError } from '../../util/errors.ts';
import { SchemaNotYetCreated } from '../schema-not-yet-created.ts';
import { BaseWarehouse } from '../base-warehouse.ts';
import type { BookkeepingDb } from '../bookkeeping.ts';
import type { StagingBackend } from '../load-unit.ts';
import type { LockWait, ParquetCompression, ParquetExport } from '../types.ts';
import type { SqlRunner } from '../sql-runner.ts';
import { ident, literal } from '../values.ts';
import { analyticsSchemaFor } from '../analytics-schema.ts';
import { acquireInstance, connectWarehouse, type InstanceSettings, releaseInstance } from './instance.ts';
import { DuckDBDialect } from './kysely-dialect.ts';
import { RunLock } from './lock.ts';
import { DuckDBSession } from './session.ts';
import { DuckDBStaging } from './staging.ts';
import { readStatement } from './read-statement.ts';
import type { StatementResult } from '../types.ts';
import { duckdbSql } from './sql-dialect.ts';

export class DuckDBWarehouse extends BaseWarehouse {
  readonly sqlDialect = duckdbSql;
  readonly inProcess = true;
  readonly lockCoversDatabase = true;
  readonly description: string;
  protected readonly schemaName: string;
  readonly analyticsSchema: string;
  /** `null` in `main` (the SQL files name their tables unqualified), else the site's schema (see DuckDBSchema). */
  protected readonly migrationSchema: string | null;
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
    schema: string,
  ) {
    super(logger);
    this.schemaName = schema;
    this.analyticsSchema = analyticsSchemaFor(schema, duckdbSql.defaultSchema);
    this.migrationSchema = schema === 'main' ? null : schema;
    this.description = schema === 'main' ? path : `${path} (schema ${schema})`;
    this.lock = new RunLock(path, readOnly, logger, schema);
    this.db = new Kysely<BookkeepingDb>({ dialect: new DuckDBDialect(main) });
    this.migrationDb = this.db as unknown as Kysely<unknown>;
  }

  /**
   * `schema` (default `main`): the schema holding every table, as a portfolio's site keeps its own in one file
   * (pipeline/portfolio.ts). Each connection resolves unqualified names there (models, bookkeeping, analysts' SQL).
   */
  static async open(
    target: string,
    logger: Logger,
    settings: InstanceSettings & {
      readonly schema?: string;
      /** A missing schema: made (a writer, default), found missing to a check (doctor), or a ConfigError. */
      readonly missingSchema?: 'create' | 'check' | 'refuse';
    },
  ): Promise<DuckDBWarehouse> {
    const schema = settings.schema ?? 'main';
    const { path, instance, readOnly } = await acquireInstance(target, settings);
    try {
      const main = new DuckDBSession(await connectWarehouse(instance));
      try {
        await useSchema(main, schema, readOnly ? 'refuse' : (settings.missingSchema ?? 'create'), path);
      } catch (e) {
        main.close();
        throw e;
      }
      const warehouse = new DuckDBWarehouse(path, instance, main, readOnly, logger, schema);
      if (await warehouse.hasAnalyticsSchema()) await warehouse.searchAnalytics();
      return warehouse;
    } catch (e) {
      releaseInstance(path);
      throw e;
    }
  }

  qualify(table: string): string {
    return `${ident(this.schemaName)}.${ident(table)}`;
  }

  readStatement(sql: string): Promise<StatementResult> {
    return readStatement(this.main, sql);
  }

  protected runner(): SqlRunner {
    return this.main;
  }

  protected transaction<T>(fn: (runner: SqlRunner) => Promise<T>): Promise<T> {
    return new DuckDBStaging(async () => this.main, this.compileBookkeeping, undefined, this.schemaName).atomically(fn);
  }

  protected async openStaging(): Promise<StagingBackend> {
    // Each load unit gets its own connection: its TEMP staging tables and its transaction are its own.
    const connect = async (): Promise<DuckDBSession> => {
      const session = new DuckDBSession(await connectWarehouse(this.instance));
      this.sessions.add(session);
      // The commit's bookkeeping statements name their tables unqualified: they must land in this schema too.
      if (this.schemaName !== 'main') await session.run(`SET schema = ${literal(this.schemaName)}`);
      return session;
    };
    const release = (session: DuckDBSession): void => {
      this.sessions.delete(session);
      session.close();
    };
    return new DuckDBStaging(connect, this.compileBookkeeping, release, this.schemaName);
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
    await this.main.run(`SET search_path = ${literal(`${this.schemaName},${this.analyticsSchema}`)}`);
  }

  /**
   * Explicit BEGIN/COMMIT and a ROLLBACK on failure (DuckDB's views do not pin the tables they read). A model table
   * an older version built in `main` is dropped with it: views naming it unqualified now read the analytics one.
   */
  async replaceTable(
    name: string,
    select: string,
    _what?: string,
    _wait?: LockWait,
    primaryKey: readonly string[] = [],
  ): Promise<void> {
    if (!(await this.hasAnalyticsSchema())) {
      await this.exec(`CREATE SCHEMA IF NOT EXISTS ${ident(this.analyticsSchema)}`);
      await this.searchAnalytics();
    }
    const stale = await this.query(
      `SELECT 1 AS found FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2 AND table_type = 'BASE TABLE'`,
      [this.schemaName, name],
    );
    const table = this.qualifyModel(name);
    await this.execInTransaction([
      ...(stale.length > 0 ? [`DROP TABLE ${this.qualify(name)}`] : []),
      `DROP TABLE IF EXISTS ${table}`,
      `CREATE TABLE ${table} AS ${select}`,
      ...(primaryKey.length > 0 ? [`ALTER TABLE ${table} ADD PRIMARY KEY (${primaryKey.map(ident).join(', ')})`] : []),
    ]);
  }

  /** An explicit transaction, rolled back on failure (no reader of another process holds a table to wait for). */
  async execInTransaction(statements: readonly string[]): Promise<void> {
    if (statements.length === 0) return;
    try {
      await this.exec(`BEGIN TRANSACTION;\n${statements.join(';\n')};\nCOMMIT`);
    } catch (e) {
      await this.exec('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  protected async tablesOf(schema: string): Promise<Map<string, boolean>> {
    const rows = await this.query(
      `SELECT table_name, true AS readable FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = $1`,
      [schema],
    );
    return new Map(rows.map((r) => [String(r.table_name), r.readable === true]));
  }

  protected bookkeeping<T>(_what: string, _table: string, fn: (db: Kysely<BookkeepingDb>) => Promise<T>): Promise<T> {
    return fn(this.db);
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
    return Promise.resolve(RunLock.heldHere(this.path, this.schemaName));
  }

  async openParquetExport(compression: ParquetCompression): Promise<ParquetExport> {
    const { DuckDBParquetExport } = await import('./parquet-export.ts');
    return new DuckDBParquetExport(this, compression);
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

/**
 * Points a connection at `schema`: created when missing (a writer), or, for a reader, a ConfigError (a mistyped site
 * must not read as an empty warehouse), and for a check (doctor, which creates nothing) a SchemaNotYetCreated.
 */
async function useSchema(
  session: DuckDBSession,
  schema: string,
  missing: 'create' | 'check' | 'refuse',
  path: string,
): Promise<void> {
  if (schema === 'main') return;
  if (missing === 'create') {
    await session.run(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
  } else {
    const { rows } = await session.run(
      `SELECT 1 AS found FROM information_schema.schemata WHERE catalog_name = current_database() AND schema_name = $1`,
      [schema],
    );
    if (rows.length === 0 && missing === 'check')
      throw new SchemaNotYetCreated(`warehouse ${path} has no schema ${schema} yet; the first sync creates it`);
    if (rows.length === 0)
      throw new ConfigError(`warehouse ${path} has no schema ${schema}; run \`grantflow sync\` first`);
  }
  await session.run(`SET schema = ${literal(schema)}`);
}
