/**
 * The `deidentified` schema, on both engines: a sync run with GRANTFLOW_PSEUDONYM_KEY makes a view per core table
 * with as many rows as its table, identifiers as tokens and no free text or `_raw`; on PostgreSQL a role granted only
 * that schema is refused `applications` and reads `<schema>_deidentified.applications`.
 */
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { tables } from '../../src/streams/registry.ts';
import {
  clusterName,
  postgresUrl,
  postgresUrlAs,
  runCli,
  startSite,
  syncCliArgs,
  tempDir,
  writeCredentials,
} from '../support/harness.ts';

const key = 'another-test-key-for-the-views-0123456789';
const core = tables.filter((t) => t.kind === 'entity' || t.kind === 'dimension' || t.kind === 'bridge');

let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
const prefix = clusterName('deid');
const schema = `${prefix}_schema`;
const reader = `${prefix}_role`;
const admin = new pg.Client({ connectionString: postgresUrl });

/** Every email the site served: none may show in a view. */
const servedEmails = (): Set<string> => new Set(sim.control.collection('users').map((u) => String(u.email)));

beforeAll(async () => {
  sim = await startSite({ seed: 45 });
  work = await tempDir('grantflow-deidentified-');
  await writeCredentials(sim, join(work.path, 'creds.json'));
  await admin.connect();
  for (const warehouse of [
    ['--warehouse', join(work.path, 'warehouse.duckdb')],
    ['--warehouse', postgresUrl, '--schema', schema],
  ]) {
    const r = await runCli([...syncCliArgs(sim.url, work.path, { warehouse })], {
      env: { GRANTFLOW_PSEUDONYM_KEY: key },
      timeoutMs: 300_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/pseudonyms: \d+ new tokens, 0 removed; \d+ deidentified views/);
  }
}, 600_000);

afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema}, ${schema}_analytics, ${schema}_deidentified CASCADE`);
  await admin.query(`DROP OWNED BY ${reader}`).catch(() => undefined);
  await admin.query(`DROP ROLE IF EXISTS ${reader}`);
  await admin.end();
  await sim?.close();
  await work?.remove();
});

/** Rows of one SQL query, on the engine under test. */
type Query = (sql: string) => Promise<Record<string, unknown>[]>;

async function checkViews(query: Query, tableSchema: string, viewSchema: string): Promise<void> {
  const emails = servedEmails();
  for (const t of core) {
    const [table] = await query(`SELECT count(*) AS n FROM "${tableSchema}"."${t.name}"`);
    const [view] = await query(`SELECT count(*) AS n FROM "${viewSchema}"."${t.name}"`);
    expect(`${t.name}: ${Number(view?.n)}`).toBe(`${t.name}: ${Number(table?.n)}`);
  }
  const users = await query(`SELECT * FROM "${viewSchema}"."users"`);
  expect(users.length).toBeGreaterThan(10);
  for (const u of users) {
    expect(emails.has(String(u.email))).toBe(false);
    expect(String(u.email)).toMatch(/^pz_/);
    expect(u).not.toHaveProperty('_raw');
  }
  const notes = await query(`SELECT * FROM "${viewSchema}"."application_notes" LIMIT 1`);
  expect(notes[0]).toBeDefined();
  expect(notes[0]).not.toHaveProperty('content');
  // An applicant's token in the applications view is a user's token in the users view.
  const [orphans] = await query(
    `SELECT count(*) AS n FROM "${viewSchema}"."applications" a WHERE a.applicant_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "${viewSchema}"."users" u WHERE u.id = a.applicant_id)`,
  );
  expect(Number(orphans?.n)).toBe(0);
}

describe('the deidentified views', () => {
  it('on DuckDB: as many rows as their tables, identifiers as tokens, no free text', async () => {
    const instance = await DuckDBInstance.create(join(work.path, 'warehouse.duckdb'), { access_mode: 'READ_ONLY' });
    const duck = await instance.connect();
    try {
      const query: Query = async (sql) => (await duck.runAndReadAll(sql)).getRowObjectsJson();
      await checkViews(query, 'main', 'deidentified');
    } finally {
      duck.closeSync();
      instance.closeSync();
    }
  });

  it('on PostgreSQL: the same, and a role granted only that schema reads the views and not the tables', async () => {
    await checkViews(async (sql) => (await admin.query(sql)).rows, schema, `${schema}_deidentified`);
    await admin.query(`CREATE ROLE ${reader} LOGIN PASSWORD 'Pw-${reader}'`);
    await admin.query(`GRANT USAGE ON SCHEMA ${schema}_deidentified TO ${reader}`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema}_deidentified TO ${reader}`);
    const client = new pg.Client({ connectionString: postgresUrlAs(reader) });
    await client.connect();
    try {
      await expect(client.query(`SELECT count(*) FROM ${schema}.applications`)).rejects.toThrow(/permission denied/);
      await expect(client.query(`SELECT count(*) FROM ${schema}._grantflow_pseudonyms`)).rejects.toThrow(
        /permission denied/,
      );
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${schema}_deidentified.applications`,
      );
      const { rows: all } = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.applications`);
      expect(Number(rows[0]?.n)).toBe(Number(all[0]?.n));
      expect(Number(rows[0]?.n)).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  });
});
