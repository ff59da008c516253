import type { Row, TableDef } from '../normalize/table-def.ts';
import { GrantflowError } from '../util/errors.ts';
import { hasMetadata } from './ddl.ts';
import {
  cascadeSql,
  deletionCandidatesSql,
  dropMarksOfDeletedSql,
  mergeSql,
  seqColumn,
  softDeleteSql,
  stagedColumns,
  type MergeStyle,
  type SqlStatement,
} from './merge-sql.ts';
import type { SqlRunner } from './sql-runner.ts';
import type { CommitInfo, CommitPlan, CompleteScope, DeletionCandidates, LoadUnit, StagedMerge } from './types.ts';

/** Rows are written to staging in batches of at most this many, so memory stays bounded whatever the caller passes. */
export const stagingBatchRows = 5000;

/** Staged rows merged per statement (see mergeParts). */
export const mergeChunkRows = 20_000;

/**
 * Test-only hook (fault suite): holds every load transaction open this long, after its merges and before its
 * bookkeeping, and says so on stderr, so a test can kill the process or its database connection inside one.
 */
const testCommitDelayMs = Number(process.env.GRANTFLOW_TEST_DELAY_COMMIT_MS ?? 0) || 0;
/** Test-only hook (fault suite): the same, once a load transaction has committed, before the caller goes on. */
const testAfterCommitDelayMs = Number(process.env.GRANTFLOW_TEST_DELAY_AFTER_COMMIT_MS ?? 0) || 0;

export interface Staging {
  readonly table: TableDef;
  readonly mode: StagedMerge;
  /** Qualified, quoted staging table name. */
  readonly name: string;
  readonly columns: readonly string[];
  /** Next `_gf_seq` value (appends are ordered so the last row of a key wins). */
  seq: number;
  rows: number;
}

/** What a load transaction does (in log lines and messages) and the tables it touches, qualified. */
export interface TransactionAbout {
  readonly what: string;
  readonly tables: readonly string[];
}

/** Bookkeeping tables a commit writes besides its own (see bookkeeping.ts commitStatements). */
const bookkeepingTables = ['_grantflow_streams', '_grantflow_parents'];

/** What a dialect provides to the shared load unit. */
export interface StagingBackend {
  /** How staged rows merge into their tables (see MergeStyle). */
  readonly mergeStyle: MergeStyle;
  createStaging(table: TableDef, mode: StagedMerge, columns: readonly string[]): Promise<string>;
  /** Write `rows` with `_gf_seq` from `staging.seq` upwards. */
  writeBatch(staging: Staging, rows: readonly Row[]): Promise<void>;
  /**
   * Run `fn` in one transaction on one connection; roll back on any error. Postgres runs it again while another
   * session's lock on one of `about.tables` holds it up (postgres/lock-wait.ts), so `fn` must start afresh each time.
   */
  transaction<T>(about: TransactionAbout, fn: (runner: SqlRunner) => Promise<T>): Promise<T>;
  dropStaging(names: readonly string[]): Promise<void>;
  /**
   * Runs the soft deletes (anti-joins of a table's scope against its staging) with what the dialect's planner needs
   * to join them in linear time.
   */
  antiJoins?(runner: SqlRunner, softDeletes: () => Promise<void>): Promise<void>;
  /** Free per-unit resources once nothing is staged (DuckDB: the unit's connection). */
  release?(): Promise<void>;
  qualify(table: string): string;
  /** Kysely-compiled bookkeeping statements for the plan. */
  bookkeeping(plan: CommitPlan): SqlStatement[];
}

/**
 * Shared by both dialects: rows stream into one staging table per (table, merge mode); commit merges them,
 * applies soft deletes, cascades and bookkeeping in one transaction. A failed commit rolls back everything and
 * keeps the staging tables, so commit can be retried or the unit discarded.
 */
export class StagingLoadUnit implements LoadUnit {
  private readonly stagings = new Map<string, Staging>();
  private closed = false;

  constructor(
    private readonly backend: StagingBackend,
    private readonly catalog: ReadonlyMap<string, TableDef>,
  ) {}

  async append(tableName: string, rows: readonly Row[], merge: StagedMerge = 'replace'): Promise<void> {
    if (this.closed) throw new GrantflowError('this load unit was discarded; open a new one');
    if (rows.length === 0) return;
    const staging = await this.stagingFor(tableName, merge);
    for (let i = 0; i < rows.length; i += stagingBatchRows) {
      const batch = rows.length <= stagingBatchRows ? rows : rows.slice(i, i + stagingBatchRows);
      checkColumns(staging, batch[0]);
      await this.backend.writeBatch(staging, batch);
      staging.seq += batch.length;
      staging.rows += batch.length;
    }
  }

  private async stagingFor(tableName: string, mode: StagedMerge): Promise<Staging> {
    const key = `${tableName}\u0000${mode}`;
    const found = this.stagings.get(key);
    if (found) return found;
    const table = this.catalog.get(tableName);
    if (!table)
      throw new GrantflowError(`cannot load unknown table "${tableName}": it is not in the catalog given to migrate()`);
    if (mode === 'coalesce' && table.primaryKey.length === 0) {
      throw new GrantflowError(`table "${tableName}" has no primary key, so rows cannot be merged with 'coalesce'`);
    }
    const columns = stagedColumns(table);
    const name = await this.backend.createStaging(table, mode, columns);
    const staging: Staging = { table, mode, name, columns, seq: 0, rows: 0 };
    this.stagings.set(key, staging);
    return staging;
  }

  async commit(plan: CommitPlan): Promise<CommitInfo> {
    if (this.closed) throw new GrantflowError('this load unit was discarded; open a new one');
    const started = performance.now();
    let merged: Record<string, number> = {};
    let deleted: Record<string, number> = {};
    // Coalesce (reference) rows first, so rows from the entity's own stream have the last word.
    const order = [...this.stagings.values()].sort((a, b) => (a.mode === b.mode ? 0 : a.mode === 'coalesce' ? -1 : 1));
    await this.backend.transaction(this.about(plan, order), async (runner) => {
      // Counted afresh by each attempt (see StagingBackend.transaction).
      merged = {};
      deleted = {};
      const scopes = plan.completeScopes ?? [];
      for (const s of order) {
        for (const part of mergeParts(s)) {
          const statements = mergeSql(
            s.table,
            this.backend.qualify(s.table.name),
            part,
            s.mode,
            plan,
            this.backend.mergeStyle,
          );
          for (const st of statements) {
            const { changes } = await runner.run(st.sql, st.params);
            merged[s.table.name] = (merged[s.table.name] ?? 0) + changes;
          }
        }
      }
      const softDeletes = async (): Promise<void> => {
        for (const scope of scopes) {
          const table = this.requireTable(scope.table);
          if (!hasMetadata(table))
            throw new GrantflowError(`table "${table.name}" has no _deleted_at column to soft-delete`);
          const staged = order.filter((s) => s.table.name === table.name && s.mode === 'replace').map((s) => s.name);
          const st = softDeleteSql(table, this.backend.qualify(table.name), staged, scope, plan.extractedAt);
          if (!st) continue;
          const { changes } = await runner.run(st.sql, st.params);
          deleted[table.name] = (deleted[table.name] ?? 0) + changes;
        }
      };
      if (scopes.length > 0)
        await (this.backend.antiJoins ? this.backend.antiJoins(runner, softDeletes) : softDeletes());
      for (const cascade of plan.cascades ?? []) {
        this.requireTable(cascade.table);
        this.requireTable(cascade.parentTable);
        const st = cascadeSql(
          cascade,
          this.backend.qualify(cascade.table),
          this.backend.qualify(cascade.parentTable),
          plan.extractedAt,
        );
        const { changes } = await runner.run(st.sql, st.params);
        deleted[cascade.table] = (deleted[cascade.table] ?? 0) + changes;
      }
      const drop = plan.dropMarksOfDeleted;
      if (drop && drop.streams.length > 0) {
        this.requireTable(drop.parentTable);
        const st = dropMarksOfDeletedSql(
          this.backend.qualify('_grantflow_parents'),
          this.backend.qualify(drop.parentTable),
          drop.parentColumn,
          drop.streams,
        );
        await runner.run(st.sql, st.params);
      }
      if (testCommitDelayMs > 0) {
        process.stderr.write(`grantflow-test: load transaction open (stream ${plan.state?.stream ?? '-'})\n`);
        await new Promise((r) => setTimeout(r, testCommitDelayMs));
      }
      for (const st of this.backend.bookkeeping(plan)) await runner.run(st.sql, st.params);
    });
    if (testAfterCommitDelayMs > 0) {
      process.stderr.write(
        `grantflow-test: load transaction committed (stream ${plan.state?.stream ?? plan.parentMarks?.stream ?? '-'})\n`,
      );
      await new Promise((r) => setTimeout(r, testAfterCommitDelayMs));
    }
    await this.dropAll();
    return { merged, deleted, durationMs: Math.round(performance.now() - started) };
  }

  /** A commit's description for its transaction: the stream (or tables) it loads and every table it touches. */
  private about(plan: CommitPlan, order: readonly Staging[]): TransactionAbout {
    const stream = plan.state?.stream ?? plan.parentMarks?.stream ?? plan.dropParentMarks?.stream;
    const loaded = [...new Set(order.map((s) => s.table.name))];
    const touched = new Set([
      ...loaded,
      ...(plan.completeScopes ?? []).map((s) => s.table),
      ...(plan.cascades ?? []).flatMap((c) => [c.table, c.parentTable]),
      ...(plan.dropMarksOfDeleted ? [plan.dropMarksOfDeleted.parentTable] : []),
      ...bookkeepingTables,
    ]);
    return {
      what: stream !== undefined ? `load of stream ${stream}` : `load of ${loaded.join(', ') || 'bookkeeping'}`,
      tables: [...touched].map((t) => this.backend.qualify(t)),
    };
  }

  async deletionCandidates(scopes: readonly CompleteScope[]): Promise<DeletionCandidates> {
    if (this.closed) throw new GrantflowError('this load unit was discarded; open a new one');
    const parentIds = new Set<string>();
    let any = false;
    // On the staging's own connection (DuckDB's TEMP tables are visible only there), with the dialect's anti-join
    // planning; nothing is written.
    const about = {
      what: `deletion check of ${scopes.map((s) => s.table).join(', ')}`,
      tables: scopes.map((s) => this.backend.qualify(s.table)),
    };
    await this.backend.transaction(about, async (runner) => {
      const ask = async (): Promise<void> => {
        for (const scope of scopes) {
          const table = this.requireTable(scope.table);
          const staged = [...this.stagings.values()]
            .filter((s) => s.table.name === table.name && s.mode === 'replace')
            .map((s) => s.name);
          const st = deletionCandidatesSql(table, this.backend.qualify(table.name), staged, scope);
          if (!st) continue;
          const { rows } = await runner.run(st.sql, st.params);
          if (rows.length > 0) any = true;
          for (const r of rows)
            if (r.parent_id !== null && r.parent_id !== undefined) parentIds.add(String(r.parent_id));
        }
      };
      await (this.backend.antiJoins ? this.backend.antiJoins(runner, ask) : ask());
    });
    return { any, parentIds: [...parentIds] };
  }

  private requireTable(name: string): TableDef {
    const t = this.catalog.get(name);
    if (!t)
      throw new GrantflowError(
        `commit plan names unknown table "${name}": it is not in the catalog given to migrate()`,
      );
    return t;
  }

  private async dropAll(): Promise<void> {
    const names = [...this.stagings.values()].map((s) => s.name);
    this.stagings.clear();
    if (names.length > 0) await this.backend.dropStaging(names);
    await this.backend.release?.();
  }

  async discard(): Promise<void> {
    this.closed = true;
    await this.dropAll();
  }
}

/**
 * The staged rows of one table in merge order: `replace` rows in slices of at most `mergeChunkRows`, so that no
 * single statement joins a whole large stream's rows at once (with DuckDB under its memory limit, each statement's
 * working set stays the size of a slice). Slices merge in staging order, so the last staged row of a key still
 * wins. References stay whole: they are few, and their richest-wins rule needs every candidate of a key in one
 * statement.
 */
function mergeParts(s: Staging): string[] {
  if (s.mode !== 'replace' || s.table.primaryKey.length === 0 || s.rows <= mergeChunkRows) return [s.name];
  const parts: string[] = [];
  for (let from = 0; from < s.seq; from += mergeChunkRows) {
    parts.push(
      `(SELECT * FROM ${s.name} WHERE ${seqColumn} >= ${from} AND ${seqColumn} < ${from + mergeChunkRows}) AS part`,
    );
  }
  return parts;
}

/** A row naming a column the table does not have is a catalog/normaliser mismatch: fail loudly, never drop data. */
function checkColumns(staging: Staging, row: Row | undefined): void {
  if (!row) return;
  for (const key of Object.keys(row)) {
    if (!staging.columns.includes(key) && !isLoaderColumn(staging.table, key)) {
      throw new GrantflowError(
        `row for table "${staging.table.name}" has column "${key}" that the table does not define`,
      );
    }
  }
}

function isLoaderColumn(table: TableDef, key: string): boolean {
  return (
    hasMetadata(table) && (key === '_extracted_at' || key === '_run_id' || key === '_deleted_at' || key === '_ref_only')
  );
}
