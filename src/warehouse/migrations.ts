import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { TableDef } from '../normalize/table-def.ts';
import { ConfigError, firstLine, GrantflowError } from '../util/errors.ts';
import {
  addColumnSql,
  allColumns,
  catalogFingerprint,
  createCurrentViewSql,
  createTableSql,
  currentViewColumns,
  currentViewName,
} from './ddl.ts';
import { applyComments, catalogObjects } from './catalog-comments.ts';
import { bookkeepingTables } from './bookkeeping-tables.ts';
import type { SqlRunner } from './sql-runner.ts';
import type { SqlDialect } from './types.ts';
import { ident } from './values.ts';
import { packagePath } from '../util/package-root.ts';
import { unitNamesMigration } from './unit-names-migration.ts';
import { onTable } from './on-table.ts';

const sqlDir = packagePath('sql');

/** The table an ALTER statement changes: whose readers' locks a lock timeout of that statement waited for. */
const alteredTable = /^ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\S+)/i;

/**
 * Versioned migrations: hand-written SQL in sql/, shared by both dialects. `lockTimeout` (Postgres, see
 * postgres/lock-wait.ts) bounds each lock wait; all pending migrations run in one transaction (Kysely's Migrator, as
 * Postgres has transactional DDL), so one that times out leaves none of them applied.
 */
function sqlMigration(file: string, schemaPrefix: string, dialect: SqlDialect, lockTimeout: string | null): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (lockTimeout !== null) await sql.raw(lockTimeout).execute(db);
      const text = readFileSync(join(sqlDir, file), 'utf8').replaceAll('{{schema}}', schemaPrefix);
      for (const statement of text.split(/;\s*(?:\n|$)/)) {
        const body = statement.replace(/^\s*--.*$/gm, '').trim();
        if (!body) continue;
        const table = alteredTable.exec(body)?.[1];
        await (table ? onTable(dialect, table, () => sql.raw(body).execute(db)) : sql.raw(body).execute(db));
      }
    },
  };
}

class SqlFileProvider implements MigrationProvider {
  constructor(
    private readonly schema: string | null,
    private readonly schemaPrefix: string,
    private readonly dialect: SqlDialect,
    private readonly lockTimeout: string | null,
  ) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const migration = (file: string): Migration =>
      sqlMigration(file, this.schemaPrefix, this.dialect, this.lockTimeout);
    return {
      '001_bookkeeping': migration('001_bookkeeping.sql'),
      '002_catalog': migration('002_catalog.sql'),
      '003_credentials_seed': migration('003_credentials_seed.sql'),
      '004_unknown_fields': migration('004_unknown_fields.sql'),
      // In TypeScript: it changes only what an older version made, so it looks first (unit-names-migration.ts).
      '005_unit_names': unitNamesMigration(this.schema, this.schemaPrefix, this.dialect, this.lockTimeout),
      '006_pseudonyms': migration('006_pseudonyms.sql'),
    };
  }
}

/** The name of every migration, as `_grantflow_migrations` records it once run: SQL files and TypeScript ones. */
export async function migrationNames(dialect: SqlDialect): Promise<string[]> {
  return Object.keys(await new SqlFileProvider(null, '', dialect, null).getMigrations());
}

function migrator(
  db: Kysely<unknown>,
  schema: string | null,
  dialect: SqlDialect,
  lockTimeout: string | null = null,
): Migrator {
  return new Migrator({
    db,
    provider: new SqlFileProvider(schema, schema === null ? '' : `${ident(schema)}.`, dialect, lockTimeout),
    migrationTableName: '_grantflow_migrations',
    migrationLockTableName: '_grantflow_migrations_lock',
    ...(schema === null ? {} : { migrationTableSchema: schema }),
  });
}

/**
 * Run pending versioned migrations (recorded in `_grantflow_migrations`). A lock timeout (under `lockTimeout`) is
 * thrown as it came, for the caller to try again.
 */
export async function runMigrations(
  db: Kysely<unknown>,
  schema: string | null,
  dialect: SqlDialect,
  lockTimeout: string | null = null,
): Promise<void> {
  const { error, results } = await migrator(db, schema, dialect, lockTimeout).migrateToLatest();
  if (error) {
    if (dialect.isLockTimeout(error)) throw error;
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    // A missing Postgres privilege (42501) is the setup's fault, named in one line, exit 2, as open() does.
    if ((error as { code?: unknown }).code === '42501')
      throw new ConfigError(`warehouse migration refused: the role lacks a privilege (${firstLine(error)})`, {
        cause: error,
      });
    throw new GrantflowError(
      `warehouse migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
      1,
      'run_failed',
      {
        cause: error,
      },
    );
  }
}

/**
 * Apply the catalog additively and idempotently: create missing tables, add missing columns (nullable),
 * never drop or retype (`views`: the `<table>_current` views made, all of them when the catalog's fingerprint is new,
 * as labels may have changed), then bring every comment up to date (catalog-comments.ts). Records the catalog's
 * fingerprint in `_grantflow_catalog` when it is new.
 * Runs inside the caller's transaction, under `lockTimeout` when given (see runMigrations).
 */
export async function applyCatalog(
  runner: SqlRunner,
  dialect: SqlDialect,
  tables: readonly TableDef[],
  qualify: (name: string) => string,
  schemaName: string,
  lockTimeout: string | null = null,
): Promise<{ created: string[]; added: string[]; views: string[]; comments: number }> {
  if (lockTimeout !== null) await runner.run(lockTimeout);
  const existing = await existingColumns(runner, schemaName);
  const fingerprint = catalogFingerprint(tables);
  const known = await runner.run(`SELECT 1 AS known FROM ${qualify('_grantflow_catalog')} WHERE fingerprint = $1`, [
    fingerprint,
  ]);
  const remakeViews = known.rows.length === 0;
  const created: string[] = [];
  const added: string[] = [];
  const views: string[] = [];
  for (const table of tables) {
    const have = existing.get(table.name);
    if (!have) {
      await runner.run(createTableSql(dialect, table, qualify(table.name)));
      created.push(table.name);
    } else {
      for (const c of allColumns(table)) {
        if (have.has(c.name)) continue;
        await onTable(dialect, qualify(table.name), () => runner.run(addColumnSql(dialect, qualify(table.name), c)));
        added.push(`${table.name}.${c.name}`);
      }
    }
    const view = currentViewName(table);
    if (view !== null && (remakeViews || viewPending(existing, table, view))) {
      await remakeView(runner, dialect, table, view, existing, qualify);
      views.push(view);
    }
  }
  const comments = await applyComments(
    runner,
    dialect,
    [...tables, ...bookkeepingTables.filter((b) => !tables.some((t) => t.name === b.name))].flatMap(catalogObjects),
    schemaName,
    qualify,
  );
  await runner.run(
    `INSERT INTO ${qualify('_grantflow_catalog')} (fingerprint, applied_at, tables) VALUES ($1, CAST($2 AS TIMESTAMPTZ), $3) ON CONFLICT (fingerprint) DO NOTHING`,
    [fingerprint, new Date().toISOString(), JSON.stringify(tables.map((t) => t.name))],
  );
  return { created, added, views, comments };
}

/**
 * Makes the table's `_current` view again, keeping the columns it has in their order (see createCurrentViewSql). One
 * that holds a column neither the table nor the catalog still has cannot be replaced so, and is dropped first.
 */
async function remakeView(
  runner: SqlRunner,
  dialect: SqlDialect,
  table: TableDef,
  view: string,
  existing: Map<string, Set<string>>,
  qualify: (name: string) => string,
): Promise<void> {
  const old = [...(existing.get(view) ?? [])];
  const readable = new Set([...(existing.get(table.name) ?? []), ...currentViewColumns(table).map((v) => v.name)]);
  const keep = old.filter((c) => readable.has(c));
  if (keep.length < old.length) await runner.run(`DROP VIEW IF EXISTS ${qualify(view)}`);
  await runner.run(createCurrentViewSql(dialect, table, qualify(view), qualify(table.name), keep));
}

/** The table's view of current rows is missing, or lacks a column of the table or a label (see createCurrentViewSql). */
function viewPending(existing: Map<string, Set<string>>, table: TableDef, view: string): boolean {
  const have = existing.get(view);
  return have === undefined || currentViewColumns(table).some((c) => !have.has(c.name));
}

async function existingColumns(runner: SqlRunner, schemaName: string): Promise<Map<string, Set<string>>> {
  const { rows } = await runner.run(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND table_catalog = current_database() ORDER BY table_name, ordinal_position`,
    [schemaName],
  );
  const existing = new Map<string, Set<string>>();
  for (const r of rows) {
    const t = String(r.table_name);
    if (!existing.has(t)) existing.set(t, new Set());
    existing.get(t)?.add(String(r.column_name));
  }
  return existing;
}

/**
 * Whether migrating would change anything (a versioned migration not run, a table or column of `tables` missing),
 * found by reading only: a command that only reads opens the warehouse to write only when it must migrate first.
 */
export async function migrationPending(
  db: Kysely<unknown>,
  schema: string | null,
  dialect: SqlDialect,
  runner: SqlRunner,
  tables: readonly TableDef[],
  schemaName: string,
): Promise<boolean> {
  if ((await migrator(db, schema, dialect).getMigrations()).some((m) => m.executedAt === undefined)) return true;
  const existing = await existingColumns(runner, schemaName);
  return tables.some((table) => {
    const have = existing.get(table.name);
    const view = currentViewName(table);
    return (
      have === undefined ||
      allColumns(table).some((c) => !have.has(c.name)) ||
      (view !== null && viewPending(existing, table, view))
    );
  });
}
