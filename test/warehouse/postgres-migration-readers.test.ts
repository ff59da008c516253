/**
 * An upgrade's migration adds columns to tables analysts read. ALTER TABLE waits for every open transaction that
 * read the table (an analyst's `BEGIN; SELECT ...` left open): grantflow must not wait without end nor in silence,
 * and a migration that gives up must leave nothing half applied.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

import { openWarehouse, type Warehouse } from '../../src/warehouse/index.ts';

import {
  capturingLogger,
  dropPostgresSchema,
  postgresUrl as url,
  analystSession,
  clusterName,
} from '../support/harness.ts';
import { tables } from '../../src/streams/registry.ts';

const schema = clusterName('migration_readers');
const wait = { attemptMs: 100, totalMs: 500 };
const { logger, lines } = capturingLogger();
let warehouse: Warehouse;
let analyst: pg.Client;
let analystPid = 0;

const hasColumn = async (table: string, column: string): Promise<boolean> =>
  (
    await warehouse.query(
      `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND column_name = $3`,
      [schema, table, column],
    )
  ).length > 0;

/** Reads `table` in a transaction left open, runs `fn`, then ends the transaction. */
async function whileAnalystHolds(table: string, fn: () => Promise<void>): Promise<void> {
  await analyst.query('BEGIN');
  await analyst.query(`SELECT * FROM ${schema}.${table} LIMIT 1`);
  try {
    await fn();
  } finally {
    await analyst.query('COMMIT');
  }
}

async function failure(p: Promise<unknown>): Promise<Error | null> {
  return p.then(
    () => null,
    (e: unknown) => e as Error,
  );
}

const waitLines = (): Record<string, unknown>[] =>
  lines.filter((l) => l.level === 40 && String(l.msg).startsWith('warehouse migration waits for a lock'));

beforeAll(async () => {
  warehouse = await openWarehouse(url, { schema, logger });
  await warehouse.migrate(tables);
  ({ client: analyst, pid: analystPid } = await analystSession());
});

beforeEach(() => {
  lines.length = 0;
});

afterAll(async () => {
  await analyst?.end();
  await warehouse.close();
  await dropPostgresSchema(schema);
});

it('a column to add to a table an open transaction has read: bounded attempts, logged holder, then a clear failure with nothing applied', async () => {
  // An older version's tables: two columns missing, one of a table before `applications` in the catalog's order.
  // CASCADE: the views of current rows read them; an older version had none.
  await warehouse.exec(
    'ALTER TABLE programs DROP COLUMN balance CASCADE; ALTER TABLE applications DROP COLUMN awarded_amount CASCADE',
  );
  await whileAnalystHolds('applications', async () => {
    const failed = await failure(warehouse.migrate(tables, wait));
    expect(failed?.message).toMatch(
      new RegExp(
        `^warehouse migration not applied, nothing changed: waited \\d+ s for a lock on "${schema}"."applications", ` +
          `held by backend pid ${analystPid} \\(role postgres`,
      ),
    );
    expect(failed?.message).toContain('must end first');
    expect(waitLines()[0]?.holders).toContain(`backend pid ${analystPid}`);
    // One transaction: the column of `programs`, added before the wait, was rolled back with it.
    expect(await hasColumn('programs', 'balance')).toBe(false);
    expect(await hasColumn('applications', 'awarded_amount')).toBe(false);
    // The analyst was not cut off.
    await analyst.query(`SELECT count(*) FROM ${schema}.applications`);
  });
  await warehouse.migrate(tables, wait);
  expect(await hasColumn('programs', 'balance')).toBe(true);
  expect(await hasColumn('applications', 'awarded_amount')).toBe(true);
}, 30_000);

it('a versioned migration altering a bookkeeping table waits the same way and is not recorded until it applies', async () => {
  // Before 003_credentials_seed (and so before the migrations after it).
  await warehouse.exec(
    `ALTER TABLE _grantflow_credentials DROP COLUMN seeded_from; DROP TABLE _grantflow_unknown_fields; ` +
      `DELETE FROM _grantflow_migrations WHERE name >= '003_credentials_seed'`,
  );
  const recorded = async (): Promise<boolean> =>
    (await warehouse.query(`SELECT 1 FROM _grantflow_migrations WHERE name = '003_credentials_seed'`)).length > 0;
  await whileAnalystHolds('_grantflow_credentials', async () => {
    const failed = await failure(warehouse.migrateBookkeeping(wait));
    expect(failed?.message).toMatch(
      new RegExp(`waited \\d+ s for a lock on "${schema}"._grantflow_credentials, held by backend pid ${analystPid} `),
    );
    expect(waitLines().length).toBeGreaterThan(0);
    expect(await hasColumn('_grantflow_credentials', 'seeded_from')).toBe(false);
    expect(await recorded()).toBe(false);
  });
  await warehouse.migrate(tables, wait);
  expect(await hasColumn('_grantflow_credentials', 'seeded_from')).toBe(true);
  expect(await recorded()).toBe(true);
}, 30_000);

it('a migration with nothing to change does not wait for readers at all', async () => {
  await whileAnalystHolds('applications', async () => {
    await warehouse.migrate(tables, wait);
    expect(waitLines()).toEqual([]);
  });
});
