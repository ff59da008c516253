import type { Kysely } from 'kysely';
import type { CellValue, TableDef } from '../normalize/table-def.ts';
import type { JsonValue } from '../util/json.ts';
import type { Logger } from '../util/logger.ts';
import { GrantflowError } from '../util/errors.ts';
import * as bk from './bookkeeping.ts';
import type { UnknownFieldRow } from './unknown-field-row.ts';
import { StagingLoadUnit, type StagingBackend } from './load-unit.ts';
import { applyComments, readComments } from './catalog-comments.ts';
import { applyCatalog, migrationPending, runMigrations } from './migrations.ts';
import type { ResultRow, SqlRunner } from './sql-runner.ts';
import { ident } from './values.ts';
import type {
  Dialect,
  LoadUnit,
  ParquetCompression,
  ParquetExport,
  ViewKeys,
  SqlDialect,
  LockWait,
  RunRecord,
  StatementResult,
  StoredCredentials,
  Warehouse,
  CatalogObject,
  StoredComments,
} from './types.ts';

/** What differs between DuckDB and Postgres; everything else is shared here. */
export abstract class BaseWarehouse implements Warehouse {
  abstract readonly sqlDialect: SqlDialect;
  get dialect(): Dialect {
    return this.sqlDialect.name;
  }
  abstract readonly description: string;
  abstract readonly inProcess: boolean;
  /** Schema holding the tables, as information_schema names it. */
  protected abstract readonly schemaName: string;
  protected abstract readonly db: Kysely<bk.BookkeepingDb>;
  protected abstract readonly migrationDb: Kysely<unknown>;
  /** `null` for DuckDB (main schema), the configured schema for Postgres. */
  protected abstract readonly migrationSchema: string | null;
  private catalog = new Map<string, TableDef>();

  constructor(protected readonly logger: Logger) {}

  protected abstract runner(): SqlRunner;
  protected abstract transaction<T>(fn: (runner: SqlRunner) => Promise<T>): Promise<T>;
  protected abstract openStaging(): Promise<StagingBackend>;
  abstract qualify(table: string): string;
  abstract readStatement(sql: string): Promise<StatementResult>;
  abstract exec(sql: string): Promise<void>;
  /**
   * Runs `step` (one transaction that may drop or alter `table`, qualified, which readers may hold), given the
   * statement that bounds a lock wait in it (null where none is needed): Postgres tries it again while readers hold
   * the table (postgres/lock-wait.ts); DuckDB runs it once.
   */
  protected abstract waitingForLocks<T>(
    what: string,
    table: string,
    step: (lockTimeout: string | null) => Promise<T>,
    wait?: LockWait,
  ): Promise<T>;
  abstract replaceTable(
    name: string,
    select: string,
    what: string,
    wait?: LockWait,
    primaryKey?: readonly string[],
  ): Promise<void>;
  async schemaTables(): Promise<Map<string, boolean>> {
    return this.tablesOf(this.schemaName);
  }
  async modelTables(): Promise<Map<string, boolean>> {
    return this.tablesOf(this.analyticsSchema);
  }
  /** The tables (and views) of `schema`, each with whether the role may read it; empty while the schema is missing. */
  protected abstract tablesOf(schema: string): Promise<Map<string, boolean>>;
  abstract readonly analyticsSchema: string;

  qualifyModel(name: string): string {
    return `${ident(this.analyticsSchema)}.${ident(name)}`;
  }

  describe(objects: readonly CatalogObject[], schema: string = this.schemaName): Promise<number> {
    const qualify =
      schema === this.schemaName ? (t: string) => this.qualify(t) : (t: string) => `${ident(schema)}.${ident(t)}`;
    return applyComments(this.runner(), this.sqlDialect, objects, schema, qualify);
  }

  comments(schema: string = this.schemaName): Promise<StoredComments> {
    return readComments(this.runner(), this.sqlDialect, schema);
  }
  abstract acquireLock(owner: string): Promise<void>;
  abstract nameHolder(owner: string): Promise<void>;
  abstract runLockHeld(): Promise<boolean>;
  abstract close(): Promise<void>;
  abstract readonly lockCoversDatabase: boolean;
  abstract execInTransaction(statements: readonly string[], table: string, what: string): Promise<void>;
  abstract openParquetExport(compression: ParquetCompression, viewKeys?: ViewKeys): Promise<ParquetExport>;

  execExclusive(sql: string, table: string, what: string, wait?: LockWait): Promise<void> {
    return this.waitingForLocks(
      what,
      this.qualify(table),
      (lockTimeout) => this.exec(lockTimeout === null ? sql : `${lockTimeout}; ${sql}`),
      wait,
    );
  }

  /** A migration that must wait past the bound is rolled back whole: the message says so, as the rerun applies it. */
  private async alteringTables<T>(
    table: string,
    step: (lockTimeout: string | null) => Promise<T>,
    wait?: LockWait,
  ): Promise<T> {
    const what = 'warehouse migration';
    try {
      return await this.waitingForLocks(what, table, step, wait);
    } catch (e) {
      if (!(e instanceof GrantflowError) || e.code !== 'lock_wait') throw e;
      throw new GrantflowError(`${what} not applied, nothing changed: ${e.message}`, e.exitCode, e.code);
    }
  }

  async migrateBookkeeping(wait?: LockWait): Promise<void> {
    await this.alteringTables(
      this.qualify('_grantflow_migrations'),
      (lockTimeout) => runMigrations(this.migrationDb, this.migrationSchema, this.sqlDialect, lockTimeout),
      wait,
    );
  }

  async migrate(tables: readonly TableDef[], wait?: LockWait): Promise<void> {
    await this.migrateBookkeeping(wait);
    const { created, added, views, comments } = await this.alteringTables(
      this.qualify('_grantflow_catalog'),
      (lockTimeout) =>
        this.transaction((runner) =>
          applyCatalog(runner, this.sqlDialect, tables, (t) => this.qualify(t), this.schemaName, lockTimeout),
        ),
      wait,
    );
    this.catalog = new Map(tables.map((t) => [t.name, t]));
    if (created.length > 0 || added.length > 0 || views.length > 0) {
      // One short line: a first sync creates some eighty tables and views, whose names filled a terminal.
      this.logger.info(`warehouse schema evolved: ${schemaChangeCounts(created, added, views)}`);
      this.logger.debug({ created, added, views }, 'warehouse schema evolved');
    }
    if (comments > 0) this.logger.debug({ comments }, 'warehouse comments updated');
  }

  needsMigration(tables: readonly TableDef[]): Promise<boolean> {
    return migrationPending(
      this.migrationDb,
      this.migrationSchema,
      this.sqlDialect,
      this.runner(),
      tables,
      this.schemaName,
    );
  }

  async openLoad(): Promise<LoadUnit> {
    if (this.catalog.size === 0) {
      this.logger.warn('openLoad() before migrate(): no table is known, every append will fail');
    }
    return new StagingLoadUnit(await this.openStaging(), this.catalog);
  }

  /** DuckDB keeps statistics as it writes; Postgres overrides this. */
  async refreshStatistics(): Promise<string[]> {
    return [];
  }

  /** Postgres writes its own files; DuckDB overrides this. */
  async checkpoint(): Promise<void> {}

  /** The warehouse runs elsewhere (Postgres); DuckDB overrides this. */
  whileBulkLoading<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  /** The tables migrate() was given, by name. */
  protected catalogTables(): string[] {
    return [...this.catalog.keys()];
  }

  /** Kysely-compiled bookkeeping writes of a commit, for the staging backends. */
  protected compileBookkeeping = (
    plan: Parameters<typeof bk.commitStatements>[1],
  ): ReturnType<typeof bk.commitStatements> => bk.commitStatements(this.db, plan);

  async query(sql: string, params: readonly CellValue[] = []): Promise<ResultRow[]> {
    return (await this.runner().run(sql, params)).rows;
  }

  /** DuckDB: a file holds one warehouse; Postgres overrides this. */
  queryOwnTables(sql: string): Promise<ResultRow[]> {
    return this.query(sql);
  }

  /**
   * How the engine runs a bookkeeping read or write (bookkeeping.ts) on `table`: Postgres bounds its lock wait
   * (postgres/lock-wait.ts), a run's `final` record under the short bound left after a stop; DuckDB just runs it.
   */
  protected abstract bookkeeping<T>(
    what: string,
    table: string,
    fn: (db: bk.BookkeepingKysely) => Promise<T>,
    final?: boolean,
  ): Promise<T>;

  /** Before a run's record is written: Postgres checks that its run lock is still held (postgres/lock.ts). */
  protected async beforeRunRecord(): Promise<void> {}

  readState(stream: string): Promise<JsonValue | null> {
    return this.bookkeeping(`reading the state of stream ${stream}`, '_grantflow_streams', (db) =>
      bk.readState(db, stream),
    );
  }
  readParentMarks(stream: string): Promise<Map<string, string | null>> {
    return this.bookkeeping(`reading the parents stream ${stream} has read`, '_grantflow_parents', (db) =>
      bk.readParentMarks(db, stream),
    );
  }
  /**
   * A run's final record (how it ended) is still written after a stop: given up at once, the run would stay
   * `running` (see `bookkeeping`).
   */
  async saveRun(run: RunRecord): Promise<void> {
    await this.beforeRunRecord();
    await this.bookkeeping(
      `saving the record of run ${run.runId}`,
      '_grantflow_runs',
      (db) => bk.saveRun(db, run),
      run.status !== 'running',
    );
  }
  listRuns(limit: number): Promise<RunRecord[]> {
    return this.bookkeeping('reading the runs', '_grantflow_runs', (db) => bk.listRuns(db, limit));
  }
  listUnknownFields(): Promise<UnknownFieldRow[]> {
    return bk.listUnknownFields(this.db);
  }
  saveUnknownFields(rows: readonly UnknownFieldRow[]): Promise<void> {
    return bk.saveUnknownFields(this.db, rows);
  }
  readCredentials(site: string): Promise<StoredCredentials | null> {
    return this.bookkeeping('reading the stored credentials', '_grantflow_credentials', (db) =>
      bk.readCredentials(db, site),
    );
  }
  /**
   * Not through `bookkeeping`: the site has already replaced the refresh token, so giving up would lose the only
   * working pair; it waits for a lock on its tiny table as long as it takes (a second signal still exits).
   */
  writeCredentials(site: string, creds: StoredCredentials): Promise<void> {
    return bk.writeCredentials(this.db, site, creds);
  }
  async carryCredentials(from: string, to: string): Promise<void> {
    const pair = await this.readCredentials(from);
    if (!pair) return;
    const table = this.qualify('_grantflow_credentials');
    const newer = await this.query(
      `SELECT 1 AS newer FROM ${table} n, ${table} o WHERE n.site = $1 AND o.site = $2 AND n.updated_at >= o.updated_at`,
      [to, from],
    );
    if (newer.length === 0) await this.writeCredentials(to, pair);
  }
}

/** `42 tables created, 5 columns added in 2 tables, 41 views created`: what a migration changed, counted. */
export function schemaChangeCounts(
  created: readonly string[],
  added: readonly string[],
  views: readonly string[],
): string {
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts: string[] = [];
  if (created.length > 0) parts.push(`${plural(created.length, 'table')} created`);
  if (added.length > 0) {
    const tables = new Set(added.map((c) => c.slice(0, c.lastIndexOf('.'))));
    parts.push(`${plural(added.length, 'column')} added in ${plural(tables.size, 'table')}`);
  }
  if (views.length > 0) parts.push(`${plural(views.length, 'view')} created`);
  return parts.join(', ');
}
