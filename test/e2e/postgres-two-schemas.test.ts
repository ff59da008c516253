/**
 * Two grantflow warehouses in one Postgres database: one in `public`, one in another schema whose `funds` table is
 * gone (an older version, a table an analyst dropped). grantflow's search path is `<schema>, public`, so an
 * unqualified name the schema lacks resolves in `public`: `status` and the data tests of the other schema must read
 * its own tables only, never the other warehouse's. Their models live apart too: `analytics` beside `public`,
 * `second_analytics` beside `second` (docs/postgres.md).
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { runDataTests, runModels } from '../../src/models/index.ts';

import { openWarehouse } from '../../src/warehouse/index.ts';

import { load, smallSite } from '../support/model-fixtures.ts';

import { postgresUrl, clusterName } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { tables } from '../../src/streams/registry.ts';

// Its own database: this needs a warehouse in `public`, which the shared test database leaves to others.
const database = clusterName('two_schemas');
const url = new URL(postgresUrl);
url.pathname = `/${database}`;
const admin = new pg.Client({ connectionString: postgresUrl });
const funds = smallSite().data.funds?.length ?? 0;

beforeAll(async () => {
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  for (const schema of ['public', 'second']) {
    const warehouse = await openWarehouse(url.toString(), { schema });
    try {
      await warehouse.migrate(tables);
      const data = smallSite().data;
      // Different data: the second warehouse holds one program of the four.
      if (schema === 'second') data.programs = data.programs?.slice(0, 1) ?? [];
      await load(warehouse, data);
      await warehouse.saveRun({ runId: `run-${schema}`, startedAt: '2026-01-01T00:00:00.000Z', status: 'succeeded' });
      // Before its funds go: the second warehouse's models are built from its own tables.
      await runModels(warehouse, { only: ['award_rates'] });
      if (schema === 'second') await warehouse.exec('DROP TABLE second.funds CASCADE'); // and its view funds_current
    } finally {
      await warehouse.close();
    }
  }
});

afterAll(async () => {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

it('status of the second schema counts its own tables, and shows a table it lacks as missing', async () => {
  expect(funds).toBeGreaterThan(0);
  const r = await runCliInProcess(['status', '--warehouse', url.toString(), '--schema', 'second']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('run-second');
  expect(r.stdout).not.toContain('run-public');
  expect(r.stdout).toMatch(/^ {2}programs +1 +0$/m);
  expect(r.stdout).toMatch(/^ {2}funds +- +-$/m);
});

it('data tests of the second schema do not read the tables of the warehouse in public', async () => {
  const warehouse = await openWarehouse(url.toString(), { schema: 'second', existingOnly: true });
  try {
    const results = await runDataTests(warehouse);
    const ofFunds = results.filter((r) => r.name === 'unique:funds(id)' || r.name === 'fund_balance_reconciles');
    expect(ofFunds).toHaveLength(2);
    for (const r of ofFunds) {
      expect(r.status).toBe('error');
      expect(r.message).toContain('relation "funds" does not exist');
    }
  } finally {
    await warehouse.close();
  }
});

it('each warehouse keeps its models in its own analytics schema, built from its own tables', async () => {
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  let secondPrograms = -1;
  try {
    for (const [schema, analytics] of [
      ['public', 'analytics'],
      ['second', 'second_analytics'],
    ] as const) {
      const live = await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${schema}.programs WHERE _deleted_at IS NULL`,
      );
      const built = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${analytics}.award_rates`);
      expect(Number(built.rows[0]?.n), analytics).toBe(Number(live.rows[0]?.n));
      if (schema === 'second') secondPrograms = Number(live.rows[0]?.n);
      const left = await db.query(`SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'award_rates'`, [
        schema,
      ]);
      expect(left.rows, schema).toEqual([]);
    }
  } finally {
    await db.end();
  }
  const r = await runCliInProcess(['status', '--warehouse', url.toString(), '--schema', 'second']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(
    new RegExp(`^models \\(schema second_analytics, rows\\):\\n {2}award_rates +${secondPrograms}$`, 'm'),
  );
});
