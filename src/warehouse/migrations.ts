import { readFileSync } from 'node:fs';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { TableDef } from '../normalize/table-def.ts';
import { ConfigError, firstLine, GrantflowError } from '../util/errors.ts';
import { addColumnSql, allColumns, catalogFingerprint, createTableSql } from './ddl.ts';
import type { SqlRunner } from './sql-runner.ts';
import type { Dialect } from './types.ts';
import { ident } from './values.ts';

const sqlDir = new URL('../../sql/', import.meta.url);

/** Versioned migrations: hand-written SQL in sql/, shared by both dialects. */
function sqlMigration(file: string, schemaPrefix: string): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const text = readFileSync(new URL(file, sqlDir), 'utf8').replaceAll('{{schema}}', schemaPrefix);
      for (const statement of text.split(/;\s*(?:\n|$)/)) {
        const body = statement.replace(/^\s*--.*$/gm, '').trim();
        if (body) await sql.raw(body).execute(db);
      }
    },
  };
}

class SqlFileProvider implements MigrationProvider {
  constructor(private readonly schemaPrefix: string) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return {
      '001_bookkeeping': sqlMigration('001_bookkeeping.sql', this.schemaPrefix),
      '002_catalog': sqlMigration('002_catalog.sql', this.schemaPrefix),
      '003_credentials_seed': sqlMigration('003_credentials_seed.sql', this.schemaPrefix),
    };
  }
}

function migrator(db: Kysely<unknown>, schema: string | null): Migrator {
  return new Migrator({
    db,
    provider: new SqlFileProvider(schema === null ? '' : `${ident(schema)}.`),
    migrationTableName: '_grantflow_migrations',
    migrationLockTableName: '_grantflow_migrations_lock',
    ...(schema === null ? {} : { migrationTableSchema: schema }),
  });
}

/** Run pending versioned migrations (recorded in `_grantflow_migrations`). */
export async function runMigrations(db: Kysely<unknown>, schema: string | null): Promise<void> {
  const { error, results } = await migrator(db, schema).migrateToLatest();
  if (error) {
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
 * never drop or retype. Records the catalog's fingerprint in `_grantflow_catalog` when it is new.
 * Runs inside the caller's transaction.
 */
export async function applyCatalog(
  runner: SqlRunner,
  dialect: Dialect,
  tables: readonly TableDef[],
  qualify: (name: string) => string,
  schemaName: string,
): Promise<{ created: string[]; added: string[] }> {
  const existing = await existingColumns(runner, schemaName);
  const created: string[] = [];
  const added: string[] = [];
  for (const table of tables) {
    const have = existing.get(table.name);
    if (!have) {
      await runner.run(createTableSql(dialect, table, qualify(table.name)));
      created.push(table.name);
      continue;
    }
    for (const c of allColumns(table)) {
      if (have.has(c.name)) continue;
      await runner.run(addColumnSql(dialect, qualify(table.name), c));
      added.push(`${table.name}.${c.name}`);
    }
  }
  const fingerprint = catalogFingerprint(tables);
  await runner.run(
    `INSERT INTO ${qualify('_grantflow_catalog')} (fingerprint, applied_at, tables) VALUES ($1, CAST($2 AS TIMESTAMPTZ), $3) ON CONFLICT (fingerprint) DO NOTHING`,
    [fingerprint, new Date().toISOString(), JSON.stringify(tables.map((t) => t.name))],
  );
  return { created, added };
}

async function existingColumns(runner: SqlRunner, schemaName: string): Promise<Map<string, Set<string>>> {
  const { rows } = await runner.run(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND table_catalog = current_database()`,
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
  runner: SqlRunner,
  tables: readonly TableDef[],
  schemaName: string,
): Promise<boolean> {
  if ((await migrator(db, schema).getMigrations()).some((m) => m.executedAt === undefined)) return true;
  const existing = await existingColumns(runner, schemaName);
  return tables.some((table) => {
    const have = existing.get(table.name);
    return have === undefined || allColumns(table).some((c) => !have.has(c.name));
  });
}
