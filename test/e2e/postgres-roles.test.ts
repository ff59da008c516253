/**
 * A shared production database: grantflow runs as a role that owns only its schema (no CREATE on the database),
 * and other roles (a second service account, an analyst) point grantflow's commands at that schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import pg from 'pg';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import {
  postgresUrl,
  postgresUrlAs,
  startSite,
  syncCliArgs,
  tempDir,
  writeCredentials,
  clusterName,
} from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

const prefix = clusterName('roles');
const owner = `${prefix}_owner`;
const other = `${prefix}_other`;
const schema = `${prefix}_schema`;
const admin = new pg.Client({ connectionString: postgresUrl });

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  await admin.connect();
  for (const role of [owner, other]) await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'Pw-${role}'`);
  await admin.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${owner}`);
  // The second role may create tables in the schema: only ownership of grantflow's tables is missing.
  await admin.query(`GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${other}`);
  // The models' schema is made for them too by the first test (docs/postgres.md), and granted to the second role.
  sim = await startSite({ scale: 'tiny', seed: 43 });
  dir = await tempDir();
  await writeCredentials(sim, join(dir.path, 'creds.json'));
});

afterAll(async () => {
  await sim?.close();
  await dir?.remove();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema}, ${schema}_analytics CASCADE`);
  for (const role of [owner, other]) {
    await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
  }
  await admin.end();
});

const warehouseAs = (role: string): string[] => ['--warehouse', postgresUrlAs(role), '--schema', schema];

async function tablesOwnedBy(role: string): Promise<string[]> {
  const { rows } = await admin.query<{ tablename: string }>(
    `SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tableowner = $2`,
    [schema, role],
  );
  return rows.map((r) => r.tablename);
}

async function runCount(): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}._grantflow_runs`);
  return Number(rows[0]?.n);
}

describe('a role that owns only its schema', () => {
  it('syncs into it without CREATE on the database', async () => {
    const { rows } = await admin.query<{ ok: boolean }>(
      `SELECT has_database_privilege($1, current_database(), 'CREATE') AS ok`,
      [owner],
    );
    expect(rows[0]?.ok).toBe(false);
    // Without its models' schema, which it may not create: refused before anything is written, naming the statement.
    const refused = await runCliInProcess(syncCliArgs(sim.url, dir.path, { warehouse: warehouseAs(owner) }));
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain(`CREATE SCHEMA "${schema}_analytics" AUTHORIZATION "${owner}"`);
    expect(await tablesOwnedBy(owner)).toEqual([]);
    await admin.query(`CREATE SCHEMA ${schema}_analytics AUTHORIZATION ${owner}`);
    await admin.query(`GRANT USAGE, CREATE ON SCHEMA ${schema}_analytics TO ${other}`);
    const r = await runCliInProcess(syncCliArgs(sim.url, dir.path, { warehouse: warehouseAs(owner) }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await runCount()).toBe(1);
  }, 180_000);
});

describe("a role with CREATE on the schema but not owning grantflow's tables", () => {
  const refusal = (stderr: string): void => {
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(`schema ${schema}: role ${other} does not own grantflow's tables there`);
    expect(stderr).toContain(`owned by ${owner}`);
    expect(stderr).toContain(`GRANT "${owner}" TO "${other}"`);
    expect(stderr).not.toContain(`Pw-${other}`);
  };

  it('sync exits 2 with one line naming the owner and the grant, before anything is written', async () => {
    const r = await runCliInProcess(syncCliArgs(sim.url, dir.path, { warehouse: warehouseAs(other) }));
    expect(r.code).toBe(2);
    refusal(r.stderr);
    expect(await tablesOwnedBy(other)).toEqual([]);
    expect(await runCount()).toBe(1);
  });

  it('models run exits 2 the same way', async () => {
    const r = await runCliInProcess(['models', 'run', ...warehouseAs(other)]);
    expect(r.code).toBe(2);
    refusal(r.stderr);
    expect(await tablesOwnedBy(other)).toEqual([]);
  });

  it('doctor reports it as a failed warehouse check (exit 2) instead of "writable"', async () => {
    const r = await runCliInProcess([
      'doctor',
      '--site',
      sim.url,
      '--credentials',
      join(dir.path, 'creds.json'),
      ...warehouseAs(other),
      '--snapshots',
      join(dir.path, 'snapshots'),
    ]);
    expect(r.code).toBe(2);
    // The warehouse check's own line (the exposure check may name --warehouse too, for its password).
    const line = r.stdout.split('\n').find((l) => /^\S+ +warehouse /.test(l)) ?? '';
    expect(line).toMatch(/^FAIL {2}warehouse/);
    refusal(line.replace(/^FAIL\s+warehouse\s+/, ''));
  });

  it('status without SELECT on the tables exits 2 with one line naming the table and its GRANT, not a stack trace', async () => {
    const r = await runCliInProcess(['status', ...warehouseAs(other)]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringContaining('the Postgres role lacks a privilege grantflow needs: permission denied for table'),
    ]);
    // README: the refusal gives the GRANT too, as snapshot's and models test's do.
    expect(r.stderr).toContain(`grant it (GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${other}")`);
  });

  it('snapshot without SELECT on the tables exits 2 naming the privilege and its GRANT, not "no tables yet"', async () => {
    const r = await runCliInProcess([
      'snapshot',
      ...warehouseAs(other),
      '--snapshots',
      join(dir.path, 'snapshots-other'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          // The models too, in their own schema: named with it, and its grants (USAGE included).
          `^grantflow: .*role ${other} lacks SELECT on \\d+ of the tables to snapshot in schema ${schema} and ${schema}_analytics \\(`,
        ),
      ),
    ]);
    expect(r.stderr).toContain(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${other}"`);
    expect(r.stderr).toContain(`GRANT USAGE ON SCHEMA "${schema}_analytics" TO "${other}"`);
    expect(r.stderr).not.toContain(`Pw-${other}`);
  });

  it('status and snapshot without USAGE on the schema exit 2 naming that privilege and its GRANT', async () => {
    await admin.query(`REVOKE USAGE ON SCHEMA ${schema} FROM ${other}`);
    try {
      for (const command of [['status'], ['snapshot', '--snapshots', join(dir.path, 'snapshots-other')]]) {
        const r = await runCliInProcess([...command, ...warehouseAs(other)]);
        expect(r.code).toBe(2);
        expect(r.stderr.trim().split('\n')).toEqual([
          expect.stringContaining(`schema ${schema}: role ${other} may not use it`),
        ]);
        expect(r.stderr).toContain(`GRANT USAGE ON SCHEMA "${schema}" TO "${other}"`);
      }
    } finally {
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${other}`);
    }
  });

  it('once a member of the owning role, it syncs', async () => {
    await admin.query(`GRANT ${owner} TO ${other}`);
    try {
      const r = await runCliInProcess(syncCliArgs(sim.url, dir.path, { warehouse: warehouseAs(other) }));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(await runCount()).toBe(2);
    } finally {
      await admin.query(`REVOKE ${owner} FROM ${other}`);
    }
  });
});
