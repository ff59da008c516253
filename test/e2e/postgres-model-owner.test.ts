/**
 * A model table another role owns, in a schema whose other tables are grantflow's role's own: an admin ran
 * `models run` as a superuser after an upgrade changed a model's columns (the replaced table is then the admin's), or
 * handed a table to a reporting role. A sync or `models run` must not rebuild the models before it and then fail on
 * it: it is refused before anything is written (exit 2, one line naming the table, its owner and the statement that
 * hands it back), and the statement in the message is the fix.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { join } from 'node:path';
import pg from 'pg';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import {
  modelNames,
  postgresUrl,
  postgresUrlAs,
  startSite,
  syncCliArgs,
  tempDir,
  writeCredentials,
  clusterName,
} from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

const prefix = clusterName('model_owner');
const grantflow = `${prefix}_gf`;
const reporting = `${prefix}_reporting`;
const schema = `${prefix}_schema`;
const analytics = `${schema}_analytics`;
const admin = new pg.Client({ connectionString: postgresUrl });

const warehouse = ['--warehouse', postgresUrlAs(grantflow), '--schema', schema];
let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  await admin.connect();
  for (const role of [grantflow, reporting]) await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'Pw-${role}'`);
  await admin.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${grantflow}`);
  // The models' schema (docs/postgres.md): a role without CREATE on the database has it made for it too.
  await admin.query(`CREATE SCHEMA ${analytics} AUTHORIZATION ${grantflow}`);
  sim = await startSite({ scale: 'tiny', seed: 47 });
  dir = await tempDir();
  await writeCredentials(sim, join(dir.path, 'creds.json'));
  const first = await runCliInProcess(syncCliArgs(sim.url, dir.path, { warehouse }));
  if (first.code !== 0) throw new Error(`the first sync failed: ${first.stderr}`);
});

afterAll(async () => {
  await sim?.close();
  await dir?.remove();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema}, ${analytics} CASCADE`);
  for (const role of [grantflow, reporting]) {
    await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
  }
  await admin.end();
});

/** Each model table's row versions: a rebuild (DELETE + INSERT, or a new table) changes them. */
async function modelRowVersions(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const model of modelNames) {
    const { rows } = await admin.query<{ v: string | null }>(
      `SELECT string_agg(xmin::text, ',' ORDER BY ctid) AS v FROM ${analytics}.${model}`,
    );
    out[model] = rows[0]?.v ?? '';
  }
  return out;
}

async function runCount(): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}._grantflow_runs`);
  return Number(rows[0]?.n);
}

/** The one line of a refusal: the table, its owner, and the statement that hands it back. */
function expectRefusal(line: string): string {
  expect(line).toMatch(
    new RegExp(
      `schema ${analytics}: role ${grantflow} does not own model tables it rebuilds there \\(award_rates owned by ` +
        `${reporting}\\), and only their owner may replace them: as a superuser, run ` +
        `ALTER TABLE "${analytics}"."award_rates" OWNER TO "${grantflow}"$`,
    ),
  );
  expect(line).not.toContain(`Pw-${grantflow}`);
  return /run (ALTER TABLE .*)$/.exec(line)?.[1] ?? '';
}

it('a model table another role owns: sync, models run and doctor refuse before writing anything, and the fix they name works', async () => {
  await admin.query(`ALTER TABLE ${analytics}.award_rates OWNER TO ${reporting}`);
  const versions = await modelRowVersions();
  const runs = await runCount();

  const sync = await runCliInProcess(syncCliArgs(sim.url, dir.path, { warehouse }));
  expect(sync.code, sync.stderr).toBe(2);
  expect(sync.stderr.trim().split('\n')).toHaveLength(1);
  expectRefusal(sync.stderr.trim());
  expect(await runCount()).toBe(runs);

  const models = await runCliInProcess(['models', 'run', ...warehouse]);
  expect(models.code, models.stderr).toBe(2);
  expect(models.stderr.trim().split('\n')).toHaveLength(1);
  expectRefusal(models.stderr.trim());
  // No model was rebuilt, not even those before award_rates.
  expect(await modelRowVersions()).toEqual(versions);

  const doctor = await runCliInProcess([
    'doctor',
    '--site',
    sim.url,
    '--credentials',
    join(dir.path, 'creds.json'),
    ...warehouse,
    '--snapshots',
    join(dir.path, 'snapshots'),
  ]);
  expect(doctor.code).toBe(2);
  // The warehouse check's own line (the exposure check may name --warehouse too, for its password).
  const line = doctor.stdout.split('\n').find((l) => /^\S+ +warehouse /.test(l)) ?? '';
  expect(line).toMatch(/^FAIL {2}warehouse/);
  const fix = expectRefusal(line);

  // A sync that rebuilds no model does not need it.
  const noModels = await runCliInProcess([...syncCliArgs(sim.url, dir.path, { warehouse }), '--models', 'false']);
  expect(noModels.code, noModels.stderr).toBe(0);
  expect(await runCount()).toBe(runs + 1);

  await admin.query(fix);
  const fixed = await runCliInProcess(syncCliArgs(sim.url, dir.path, { warehouse }));
  expect(fixed.stderr).toBe('');
  expect(fixed.code).toBe(0);
  const rebuilt = await modelRowVersions();
  for (const model of modelNames) expect(rebuilt[model], model).not.toBe(versions[model]);
}, 180_000);
