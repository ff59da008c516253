import type { UnknownFieldRow } from './unknown-field-row.ts';
import type { JsonValue } from '../util/json.ts';
import type { CellValue, ColumnType, Row, TableDef } from '../normalize/table-def.ts';
import type { Cascade } from '../normalize/cascade.ts';
import type { PromotionType } from '../normalize/promotions.ts';

export const dialects = ['duckdb', 'postgres'] as const;
export type Dialect = (typeof dialects)[number];

/** A model column's own precision and scale (`-- column rate decimal(9,6): ...`). */
export interface DecimalPrecision {
  readonly precision: number;
  readonly scale: number;
}

/**
 * What an engine's SQL spells its own way, known without a connection. Each dialect folder has one
 * (`sql-dialect.ts`, listed by dialects.ts); shared code (DDL, migrations, promoted columns, the data dictionary)
 * asks it rather than naming the engine.
 */
export interface SqlDialect {
  readonly name: Dialect;
  /** The schema that holds tables when none is chosen (DuckDB `main`, Postgres `public`). */
  readonly defaultSchema: string;
  /** Whether a table declares its primary key (DuckDB's do not: see duckdb/sql-dialect.ts). */
  readonly declaresPrimaryKey: boolean;
  /** The SQL type a column of catalog type `type` is stored as; `decimal` with a precision of its own if given. */
  sqlType(type: ColumnType, decimal?: DecimalPrecision): string;
  /**
   * An expression reading the JSON value at `path` of `_raw` as `promotedValue` does (normalize/promotions.ts):
   * NULL when the value has another shape.
   */
  rawValue(path: readonly string[], type: PromotionType): string;
  /** Whether `error` is a statement giving up on a lock under its lock timeout (never on DuckDB, which sets none). */
  isLockTimeout(error: unknown): boolean;
  /**
   * A query of the comments (`COMMENT ON`) of every table, view and column of the schema `$1`: rows of
   * `table_name`, `column_name` (NULL for the table or view itself) and `comment` (NULL when it has none), every
   * column listed, with a comment or not.
   */
  readonly commentsQuery: string;
  /**
   * The statement renaming a column of a view made as `SELECT *` after its table's column was renamed; null where
   * such a view shows the table's columns as they are when read (DuckDB), and the catalog makes it again anyway.
   */
  renameViewColumnSql(qualifiedView: string, from: string, to: string): string | null;
}

/**
 * How grantflow waits for a table lock that readers hold. A statement that drops or alters a table (a model whose
 * columns changed, a column added by an upgrade) needs an ACCESS EXCLUSIVE lock, which waits for every open
 * transaction that read the table: an analyst's `BEGIN; SELECT ...` left open makes it wait without end, and while
 * it waits, Postgres queues every new reader of the table behind it. So each attempt waits at most `attemptMs`
 * (readers are held up at most that long), the wait is logged with who holds the table, and after `totalMs` the
 * statement fails naming them (postgres/lock-wait.ts). DuckDB, whose file no other process reads meanwhile,
 * never waits.
 */
export interface LockWait {
  readonly attemptMs: number;
  readonly totalMs: number;
}

/** Where staged rows go and how they merge (see MergeMode in table-def.ts). */
export type StagedMerge = 'replace' | 'coalesce';

/**
 * Rows of `table` already stored that a complete scan covered: after the merge, live rows in scope whose key
 * is not among the staged rows of that table get `_deleted_at` (rows with `_ref_only` are left alone).
 * `where` narrows by equality (e.g. `{ entity_type: 'application' }`); `parentColumn` + `parentIds` narrow to
 * the children of the given parents (a per-parent fan-out scope); rows whose `keep.column` holds one of
 * `keep.values` stay live (their record was seen but staged nothing for this table).
 */
export interface CompleteScope {
  readonly table: string;
  readonly where?: Readonly<Record<string, CellValue>>;
  readonly parentColumn?: string;
  readonly parentIds?: readonly (string | number)[];
  readonly keep?: { readonly column: string; readonly values: readonly (string | number | bigint)[] };
}

/** Per-parent change markers of a fan-out stream (e.g. an application's updated_at when its tasks were read). */
export interface ParentMark {
  readonly parentId: string;
  readonly marker: string | null;
}

/** Everything one commit does, in one transaction, after the staged rows are merged. */
export interface CommitPlan {
  readonly runId: string;
  /** ISO UTC; becomes `_extracted_at` of merged rows and `_deleted_at` of rows soft-deleted by this commit. */
  readonly extractedAt: string;
  readonly completeScopes?: readonly CompleteScope[];
  readonly cascades?: readonly Cascade[];
  /** New state of a stream in `_grantflow_streams`, committed with the data. */
  readonly state?: { readonly stream: string; readonly value: JsonValue };
  /** Upserted into `_grantflow_parents` (stream, parent_id) -> marker. */
  readonly parentMarks?: { readonly stream: string; readonly marks: readonly ParentMark[] };
  /** Parents whose marks must be dropped (parent deleted), so they are fetched again if they come back. */
  readonly dropParentMarks?: { readonly stream: string; readonly parentIds: readonly string[] };
  /**
   * After the cascades: marks of these fan-out streams are dropped for every soft-deleted row of `parentTable` (its
   * children were just soft-deleted, so a mark no longer says they are current): a parent that comes back unchanged
   * has its children read again, also when those streams did not run or failed in the run that deleted it.
   */
  readonly dropMarksOfDeleted?: {
    readonly streams: readonly string[];
    readonly parentTable: string;
    readonly parentColumn: string;
  };
}

export interface CommitInfo {
  /** Rows merged per table (inserted or updated). */
  readonly merged: Readonly<Record<string, number>>;
  /** Rows soft-deleted per table by scopes and cascades. */
  readonly deleted: Readonly<Record<string, number>>;
  readonly durationMs: number;
}

export interface DeletionCandidates {
  /** Some live row in scope is missing from the staged rows. */
  readonly any: boolean;
  /** Per-parent scopes: the parents that have such rows (as their ids' text). */
  readonly parentIds: readonly string[];
}

/** A unit of loading: rows are appended to staging in bounded batches, then merged by `commit` in one transaction. */
export interface LoadUnit {
  append(table: string, rows: readonly Row[], merge?: StagedMerge): Promise<void>;
  commit(plan: CommitPlan): Promise<CommitInfo>;
  /**
   * What a commit with these scopes would soft-delete, asked before committing (read only): whether any row, and
   * the parents of those rows for per-parent scopes. A walk can then be confirmed before rows are deleted.
   */
  deletionCandidates(scopes: readonly CompleteScope[]): Promise<DeletionCandidates>;
  /** Drop the staged rows without touching the tables. */
  discard(): Promise<void>;
}

export interface RunRecord {
  readonly runId: string;
  readonly startedAt: string;
  readonly finishedAt?: string | null;
  /** running | succeeded | failed | partial */
  readonly status: string;
  /** Free-form run summary: per-stream counts, requests, retries, errors. */
  readonly summary?: JsonValue;
}

export interface StoredCredentials {
  readonly client_id: string;
  readonly client_secret: string;
  readonly access_token: string;
  readonly refresh_token: string;
  /** A SHA-256 (hex) of the GRANTFLOW_REFRESH_TOKEN this pair was rotated from; null when stored before it was kept. */
  readonly seeded_from?: string | null;
}

/**
 * A process's mark that it is refreshing the credentials kept at a warehouse target: taken before the refresh request
 * is sent, released once the new pair is saved (or the refresh failed). The site rejects a refresh token as used only
 * once another process's request with it arrived, so that process marked before: waiting for every other mark to end
 * waits until the pair it rotated is saved, however long its save takes.
 */
export interface RefreshMark {
  /** Ends this mark, then resolves once no other process's mark on the target remains. */
  waitForOthers(): Promise<void>;
  release(): Promise<void>;
}

/** What `readStatement` returns: columns (numeric ones flagged) and rows of values in the shared formats (values.ts). */
export interface StatementResult {
  readonly columns: readonly { readonly name: string; readonly numeric: boolean }[];
  readonly rows: readonly (readonly CellValue[])[];
}

export type ParquetCompression = 'zstd' | 'snappy' | 'uncompressed';

export interface ParquetFileInfo {
  readonly rows: number;
  readonly schema: readonly { readonly name: string; readonly type: string }[];
}

/** Per view, columns that order its rows uniquely: Postgres pages a view's rows by them (postgres/parquet-export.ts). */
export type ViewKeys = Readonly<Record<string, readonly string[]>>;

/** A table or view to export: the schema it is in, its name, and both together, quoted. */
export interface TableSource {
  readonly schema: string;
  readonly table: string;
  readonly qualified: string;
  /** The columns to write, each read by its SQL from the table aliased `t` (docs/privacy.md); absent: every one. */
  readonly columns?: readonly SelectedColumn[];
}

/** A column as it is written: its name and the SQL reading it from its table aliased `t`; `token`: text. */
export interface SelectedColumn {
  readonly name: string;
  readonly sql: string;
  readonly token: boolean;
}

/** What a snapshot file holds beyond its table's columns, and what it leaves out (parquet-sql.ts, snapshotSelectSql). */
export interface SnapshotShape {
  /** The snapshot's time, written to every row as `_snapshot_at`. */
  readonly snapshotAt: Date;
  /** Keep `_raw`, each row's source JSON (off by default: it is about half a snapshot's bytes). */
  readonly raw: boolean;
}

/** Writes warehouse tables to Parquet files with DuckDB's built-in writer, whatever the warehouse engine. */
export interface ParquetExport {
  /** False when the engine shows no column of `source` (a table the role may not see): nothing is written. */
  write(source: TableSource, path: string, shape: SnapshotShape): Promise<boolean>;
  /** Rows and column types as the written file declares them. */
  inspect(path: string): Promise<ParquetFileInfo>;
  close(): Promise<void>;
}

/**
 * A warehouse: the engine's operations (WarehouseEngine, what each dialect folder implements) and the bookkeeping
 * (runs, stream state, parent marks, credentials, the drift catalog) built once on them (base-warehouse.ts,
 * bookkeeping.ts).
 */
export interface Warehouse extends WarehouseEngine, WarehouseBookkeeping {}

/** The `_grantflow_*` tables' reads and writes, the same SQL on every engine (bookkeeping.ts). */
export interface WarehouseBookkeeping {
  readState(stream: string): Promise<JsonValue | null>;
  readParentMarks(stream: string): Promise<Map<string, string | null>>;
  saveRun(run: RunRecord): Promise<void>;
  listRuns(limit: number): Promise<RunRecord[]>;
  /** The drift catalog `_grantflow_unknown_fields`, newest first. */
  listUnknownFields(): Promise<UnknownFieldRow[]>;
  /** Upserts drift catalog rows (merged by the caller with what listUnknownFields returned). */
  saveUnknownFields(rows: readonly UnknownFieldRow[]): Promise<void>;

  /** Credentials kept in the warehouse when they came from read-only environment variables; keyed by site. */
  readCredentials(site: string): Promise<StoredCredentials | null>;
  writeCredentials(site: string, creds: StoredCredentials): Promise<void>;
  /**
   * A site that moved (or whose address is spelt otherwise) goes on from the pair stored for its old address `from`:
   * stored for `to` too, unless `to` holds a pair written since (an attempt killed after it rotated the copy there).
   * One written before is dead: copied by an attempt that failed, after which runs at the old address rotated on.
   */
  carryCredentials(from: string, to: string): Promise<void>;
}

/**
 * What a table or view, and each of its columns, says in the engine's catalog (`COMMENT ON`): what BI tools
 * (Metabase, Superset, Power BI, dbt docs) show beside the names. Built from the same declarations as
 * docs/data-dictionary.md (stream columns, model headers), so the two never disagree.
 */
export interface CatalogObject {
  readonly name: string;
  readonly kind: 'table' | 'view';
  readonly comment: string;
  readonly columns: readonly { readonly name: string; readonly comment: string }[];
}

/** Comments as the catalog holds them: `table` -> comment, `table.column` -> comment (null when none). */
export type StoredComments = Map<string, string | null>;

/** What differs by engine: each dialect folder implements it (docs/architecture.md#warehouse). */
export interface WarehouseEngine {
  readonly dialect: Dialect;
  /** How this engine spells what differs (types, keys, JSON paths): shared SQL asks it instead of naming the engine. */
  readonly sqlDialect: SqlDialect;
  /**
   * The engine runs inside this process (DuckDB) rather than in a server of its own (Postgres): it reads and writes
   * local files with its own SQL (a Parquet `COPY ... TO`), and its threads share this process's cores with the
   * JavaScript work beside it.
   */
  readonly inProcess: boolean;
  /** Human-readable target with any password removed. */
  readonly description: string;
  /**
   * Create or evolve the schema (bookkeeping tables + every table in `tables`). Idempotent. Postgres: a column to
   * add to a table an open transaction has read waits as execExclusive does (`wait`), each step all or nothing.
   */
  migrate(tables: readonly TableDef[], wait?: LockWait): Promise<void>;
  /** Whether `migrate(tables)` would change anything; reads only (a read-only DuckDB file can answer it). */
  needsMigration(tables: readonly TableDef[]): Promise<boolean>;
  /** Only the bookkeeping tables (runs, state, credentials): enough to keep a rotated credential pair. Idempotent. */
  migrateBookkeeping(wait?: LockWait): Promise<void>;
  openLoad(): Promise<LoadUnit>;
  /**
   * After a run's loads, before anything queries them: statistics for the planner of every catalog table never
   * analyzed or grown past its statistics (Postgres; DuckDB keeps its own as it writes). Returns the tables analyzed.
   */
  refreshStatistics(): Promise<string[]>;
  /**
   * Runs `fn`, a load whose own JavaScript keeps a core busy (replay), with the warehouse leaving that core to it:
   * DuckDB, which runs in this process, works with one thread fewer (at least one) and gets its count back after.
   * Postgres runs in its own processes: unchanged.
   */
  whileBulkLoading<T>(fn: () => Promise<T>): Promise<T>;

  /**
   * Makes every committed write part of the main file (DuckDB: CHECKPOINT, folding the `.wal` file into it), so a
   * copy of that file alone holds it. Postgres: nothing to do.
   */
  checkpoint(): Promise<void>;

  /**
   * Take the exclusive run lock of this warehouse (two syncs never run at once). Throws LockedError, with a
   * message naming the holder where known, when another process has it. Released by close() or process exit.
   */
  acquireLock(owner: string): Promise<void>;
  /**
   * Names `owner` as the holder where opening the warehouse already kept other writers out (a DuckDB file: the lock
   * note acquireLock writes, which a refused run reads), for a short write outside a run (a first run's rotated pair).
   * Elsewhere nothing: a Postgres run lock taken there could be refused, and lose that write.
   */
  nameHolder(owner: string): Promise<void>;

  /** Whether some sync holds the run lock now: a run still `running` while nobody holds it died (killed, crashed). */
  runLockHeld(): Promise<boolean>;

  /**
   * Runs one statement a person wrote (`grantflow query`), unable to write: DuckDB accepts only a SELECT (or
   * EXPLAIN) on its read-only file, Postgres runs it in a READ ONLY transaction. Unqualified names resolve in the
   * warehouse's schema, then its analytics schema. More than one statement, or one that writes, is a ConfigError;
   * an SQL error is the engine's own.
   */
  readStatement(sql: string): Promise<StatementResult>;

  /** `table` qualified with the warehouse's schema, quoted: a name that cannot resolve in another schema. */
  qualify(table: string): string;
  /** Plain SQL for models, data tests, status, snapshots. Results have bigint/decimal/timestamp already as JS primitives (number|string). */
  query(sql: string, params?: readonly CellValue[]): Promise<Record<string, CellValue>[]>;
  /**
   * `query` (without parameters) whose unqualified names resolve in the warehouse's own tables only: Postgres's
   * search path also holds `public`, where a table the schema lacks would be read from another warehouse (data tests,
   * whose SQL files name tables unqualified). DuckDB: `query`.
   */
  queryOwnTables(sql: string): Promise<Record<string, CellValue>[]>;
  exec(sql: string): Promise<void>;
  /**
   * Runs `sql` (one transaction) that drops or alters `table`. Postgres: such a lock waits for every open
   * transaction that read the table and, while waiting, holds up its new readers; so it waits in short attempts,
   * logs who holds the table, and fails after a bound (postgres/lock-wait.ts). DuckDB: `exec`.
   */
  execExclusive(sql: string, table: string, what: string, wait?: LockWait): Promise<void>;
  /**
   * Runs `statements` as one transaction, rolled back whole when one fails, that may drop or alter `table` (waited for
   * as execExclusive does).
   */
  execInTransaction(statements: readonly string[], table: string, what: string): Promise<void>;
  /**
   * The run lock keeps every other writer out of the whole database, not only this warehouse's schema (a DuckDB file
   * has one writer process at a time): a run that writes several schemas of it holds the lock throughout.
   */
  readonly lockCoversDatabase: boolean;
  /**
   * The schema of the model tables (analytics-schema.ts): `analytics`, or on Postgres `<schema>_analytics` beside a
   * schema other than `public`. Unqualified names of grantflow's sessions resolve in the warehouse's schema first,
   * then here, so a model's SQL and a data test name models and core tables alike unqualified.
   */
  readonly analyticsSchema: string;
  /** `name` qualified with the analytics schema, quoted: where model `name` lives. */
  qualifyModel(name: string): string;
  /**
   * Replaces model table `name` of the analytics schema (created when missing) with the rows of `select`, in one
   * transaction: readers see the old table or the new one. A copy an older version left in the warehouse's own schema
   * goes in the same transaction (Postgres moves it to the analytics schema when that has none yet, so views analysts
   * built on it follow; else drops it), so no model is left twice. Postgres keeps a table whose columns did not
   * change, so views analysts built on it stay, and waits for its readers as execExclusive does; DuckDB drops and
   * creates it. `primaryKey`: declared on the table (the model header's `-- primary_key:`), in the same transaction.
   */
  replaceTable(
    name: string,
    select: string,
    what: string,
    wait?: LockWait,
    primaryKey?: readonly string[],
  ): Promise<void>;
  /**
   * The tables of the warehouse's schema, each with whether this role may read them (DuckDB: every one). Postgres
   * lists those it may not read too: information_schema hides them, and a role without SELECT would see none.
   */
  schemaTables(): Promise<Map<string, boolean>>;
  /** As schemaTables, for the analytics schema (the model tables); empty while it does not exist. */
  modelTables(): Promise<Map<string, boolean>>;
  /**
   * Brings the comments (`COMMENT ON`) of `objects` in `schema` (default: the warehouse's own) up to date, only those
   * that differ (catalog-comments.ts); objects or columns the schema lacks are skipped. Returns how many changed.
   */
  describe(objects: readonly CatalogObject[], schema?: string): Promise<number>;
  /** The comments of every table, view and column of `schema` (default: the warehouse's own). */
  comments(schema?: string): Promise<StoredComments>;

  /** A writer of Parquet files from this warehouse's tables (snapshots). */
  openParquetExport(compression: ParquetCompression, viewKeys?: ViewKeys): Promise<ParquetExport>;

  close(): Promise<void>;
}
