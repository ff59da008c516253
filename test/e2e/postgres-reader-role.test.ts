/**
 * `models test` only reads, so on a shared database an analyst's role with USAGE on the schema and SELECT on its
 * tables (what `status` needs) runs the data tests; only a warehouse an older version wrote, which must be migrated
 * first, needs a role that may write, and the refusal says so before anything is written.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { openWarehouse } from '../../src/warehouse/index.ts';

import { loadSmallSite } from '../support/model-fixtures.ts';

import { postgresUrl, postgresUrlAs, clusterName } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { tables } from '../../src/streams/registry.ts';

const prefix = clusterName('reader');
const reader = `${prefix}_role`;
const schema = `${prefix}_schema`;
const admin = new pg.Client({ connectionString: postgresUrl });
const readerUrl = postgresUrlAs(reader);
const modelsTest = ['models', 'test', '--warehouse', readerUrl, '--schema', schema];

const tableNames = async (): Promise<string[]> =>
  (
    await admin.query<{ tablename: string }>(`SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1`, [
      schema,
    ])
  ).rows.map((r) => r.tablename);

beforeAll(async () => {
  await admin.connect();
  const warehouse = await openWarehouse(postgresUrl, { schema });
  try {
    await warehouse.migrate(tables);
    await loadSmallSite(warehouse);
    await warehouse.saveRun({ runId: 'r1', startedAt: '2026-01-01T00:00:00.000Z', status: 'succeeded' });
    // Left by a sync that crashed: the next sync drops it, a reader may not.
    await warehouse.exec('CREATE UNLOGGED TABLE _gf_stg_deadbeef_1 (id bigint)');
  } finally {
    await warehouse.close();
  }
  await admin.query(`CREATE ROLE ${reader} LOGIN PASSWORD 'Pw-${reader}'`);
  await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${reader}`);
  await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${reader}`);
});

afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema}, ${schema}_analytics CASCADE`);
  await admin.query(`DROP OWNED BY ${reader}`).catch(() => undefined);
  await admin.query(`DROP ROLE IF EXISTS ${reader}`);
  await admin.end();
});

it('a role that may only read runs the data tests, and leaves every table as it was', async () => {
  const before = await tableNames();
  const r = await runCliInProcess(modelsTest);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^\d+ passed, 0 failed, \d+ warnings$/m);
  expect(r.stdout).not.toContain('ERROR');
  expect(await tableNames()).toEqual(before);
});

it('a table the reader may not read: refused naming the missing SELECT, not a migration asking for CREATE', async () => {
  await admin.query(`REVOKE SELECT ON ${schema}.programs FROM ${reader}`);
  try {
    const r = await runCliInProcess(modelsTest);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`role ${reader} may not read table programs;`);
    expect(lines[0]).toContain(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${reader}"`);
    expect(lines[0]).not.toMatch(/CREATE|migrat/);
  } finally {
    await admin.query(`GRANT SELECT ON ${schema}.programs TO ${reader}`);
  }
});

it('no SELECT on the runs table: refused naming it and the GRANT, not "holds no grantflow data yet"', async () => {
  await admin.query(`REVOKE SELECT ON ${schema}._grantflow_runs FROM ${reader}`);
  try {
    const r = await runCliInProcess(modelsTest);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`role ${reader} may not read table _grantflow_runs;`);
    expect(lines[0]).toContain(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${reader}"`);
  } finally {
    await admin.query(`GRANT SELECT ON ${schema}._grantflow_runs TO ${reader}`);
  }
});

it('a warehouse to migrate first: the reader is refused at once, naming the privilege and why, with nothing written', async () => {
  // An older version's warehouse: one column missing.
  await admin.query(`ALTER TABLE ${schema}.programs DROP COLUMN balance CASCADE`);
  const r = await runCliInProcess(modelsTest);
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`role ${reader} may not create tables in it`);
  expect(lines[0]).toContain(`GRANT USAGE, CREATE ON SCHEMA "${schema}"`);
  expect(lines[0]).toContain('must be migrated before its data tests run');
  const { rows } = await admin.query(
    `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'programs' AND column_name = 'balance'`,
    [schema],
  );
  expect(rows).toEqual([]);
});
