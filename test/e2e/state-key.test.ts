/**
 * GRANTFLOW_STATE_KEY: the pair rotated from GRANTFLOW_* variables is kept in the warehouse encrypted, so no table an
 * analyst's tool may read holds a live token; a wrong or missing key is one line and exit 2; a pair stored before the
 * key was set is rewritten encrypted.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import type { Warehouse } from '../../src/warehouse/types.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { postgresSchema, startSite, tempDir } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

const key = 'correct horse battery staple, twice over';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/**
 * Every column of every table and view of the warehouse holding a value that contains one of `needles`, as
 * `table.column`: the columns are listed from the database's own catalog, not from grantflow's.
 */
async function plainTextHits(w: Warehouse, schema: string, needles: readonly string[]): Promise<string[]> {
  const columns = await w.query(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1, 2`,
    [schema],
  );
  expect(columns.length).toBeGreaterThan(100);
  const byTable = new Map<string, string[]>();
  for (const c of columns)
    byTable.set(String(c.table_name), [...(byTable.get(String(c.table_name)) ?? []), String(c.column_name)]);
  const params = needles.map((_n, i) => `$${i + 1}`);
  const hits: string[] = [];
  for (const [table, names] of byTable) {
    const sums = names.map(
      (c, i) =>
        `sum(CASE WHEN ${params.map((p) => `strpos(CAST("${c}" AS TEXT), ${p}) > 0`).join(' OR ')} THEN 1 ELSE 0 END) AS c${i}`,
    );
    const [row] = await w.query(`SELECT ${sums.join(', ')} FROM "${table}"`, needles);
    names.forEach((c, i) => {
      if (Number(row?.[`c${i}`] ?? 0) > 0) hits.push(`${table}.${c}`);
    });
  }
  return hits;
}

/** A site whose tokens live an hour, a warehouse of `dialect`, and what a CI job with those secrets runs. */
async function ciSetup(dialect: string, seed: number) {
  const sim = await startSite({ scale: 'tiny', seed, latency: { ms: 5 } });
  const dir = await tempDir();
  cleanup.push(() => sim.close(), dir.remove);
  let warehouse = join(dir.path, 'w.duckdb');
  let schema = 'main';
  const schemaArgs: string[] = [];
  if (dialect === 'postgres') {
    const pg = await postgresSchema();
    cleanup.push(pg.drop);
    warehouse = pg.url;
    schema = pg.schema;
    schemaArgs.push('--schema', pg.schema);
  }
  const initial = sim.credentials;
  const env: NodeJS.ProcessEnv = {
    GRANTFLOW_SITE: sim.url,
    GRANTFLOW_WAREHOUSE: warehouse,
    GRANTFLOW_CLIENT_ID: initial.client_id,
    GRANTFLOW_CLIENT_SECRET: initial.client_secret,
    GRANTFLOW_ACCESS_TOKEN: initial.access_token,
    GRANTFLOW_REFRESH_TOKEN: initial.refresh_token,
    GRANTFLOW_SNAPSHOT: 'false',
    // What is kept of the credentials is the subject; models and data tests read none of it.
    GRANTFLOW_MODELS: 'false',
    GRANTFLOW_RAW_DIR: join(dir.path, 'raw'),
    GRANTFLOW_RATE: '500',
  };
  const sync = (extra: NodeJS.ProcessEnv = {}) =>
    runCliInProcess(['sync', ...schemaArgs], { env: { ...env, ...extra } });
  const open = async <T>(fn: (w: Warehouse) => Promise<T>): Promise<T> => {
    const w = await openWarehouse(warehouse, { schema: schemaArgs[1], logger: silentLogger });
    try {
      return await fn(w);
    } finally {
      await w.close();
    }
  };
  /** Every secret of the live pair, and the variables' own. */
  const secrets = (sim: SimulatorHandle) => {
    const live = sim.credentials;
    return [live.client_secret, live.access_token, live.refresh_token, initial.access_token, initial.refresh_token];
  };
  return { sim, warehouse, schema, schemaArgs, env, sync, open, secrets };
}

describe.each(['duckdb', 'postgres'])('GRANTFLOW_STATE_KEY (%s)', (dialect) => {
  it('keeps the rotated pair encrypted: no table holds a token in plain text, and the next run opens it', async () => {
    const { sim, schema, sync, open, secrets } = await ciSetup(dialect, 61);
    sim.control.expireAccessTokens();
    const first = await sync({ GRANTFLOW_STATE_KEY: key });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('rotations are kept in the warehouse encrypted with GRANTFLOW_STATE_KEY');
    expect(sim.control.tokenCounts().rotated).toBe(1);

    // The variables' refresh token is used up: the second run can only go on from the stored pair, which it must open.
    sim.control.expireAccessTokens();
    const second = await sync({ GRANTFLOW_STATE_KEY: key });
    expect(second.code, second.stderr).toBe(0);
    expect(sim.control.tokenCounts()).toEqual({ rotated: 2 });

    const stored = await open((w) => w.readCredentials(sim.url));
    expect(stored?.refresh_token).toMatch(/^sealed:v1:/);
    expect(stored?.client_secret).toMatch(/^sealed:v1:/);
    expect(stored?.client_id).toBe(sim.credentials.client_id);
    expect(await open((w) => plainTextHits(w, schema, secrets(sim)))).toEqual([]);
  }, 240_000);

  it('a wrong key, or none, is one line and exit 2 before any request; the right key goes on', async () => {
    const { sim, sync, schemaArgs, env } = await ciSetup(dialect, 62);
    sim.control.expireAccessTokens();
    const first = await sync({ GRANTFLOW_STATE_KEY: key });
    expect(first.code, first.stderr).toBe(0);
    const live = sim.credentials;
    sim.control.resetCounts();

    const wrong = await sync({ GRANTFLOW_STATE_KEY: 'another key of enough length' });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^grantflow: GRANTFLOW_STATE_KEY does not open the credential pair stored in .* for /),
    ]);
    const none = await sync();
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/is encrypted and GRANTFLOW_STATE_KEY is not set: set it to the key the pair was stored/),
    ]);
    // Neither sent a single request to the site.
    expect(sim.control.counts().total).toBe(0);
    // doctor finds the same, as its stored pair check.
    const doctor = await runCliInProcess(['doctor', ...schemaArgs], {
      env: { ...env, GRANTFLOW_STATE_KEY: 'another key of enough length' },
    });
    expect(doctor.code, doctor.stdout).toBe(2);
    expect(doctor.stdout).toMatch(/^FAIL {2}stored pair {2}GRANTFLOW_STATE_KEY does not open the credential pair/m);
    // A DuckDB file on a runner that starts empty would lose the pair: a warning there (doctor-checks.test.ts).
    expect(doctor.stdout).toMatch(
      dialect === 'duckdb'
        ? /^warn {2}credentials {2}.*encrypted with GRANTFLOW_STATE_KEY; but the warehouse .* is a DuckDB file: /m
        : /^ok {4}credentials {2}.*encrypted with GRANTFLOW_STATE_KEY$/m,
    );
    const keyed = await runCliInProcess(['doctor', ...schemaArgs], { env: { ...env, GRANTFLOW_STATE_KEY: key } });
    expect(keyed.code, keyed.stdout).toBe(0);
    expect(keyed.stdout).toMatch(
      /^ok {4}stored pair {2}the pair stored for .* is encrypted and opens with GRANTFLOW_STATE_KEY$/m,
    );
    // Its client check uses a made-up refresh token: nothing rotated.
    expect(sim.control.tokenCounts().rotated).toBe(1);
    expect(sim.credentials).toEqual(live);

    sim.control.expireAccessTokens();
    const right = await sync({ GRANTFLOW_STATE_KEY: key });
    expect(right.code, right.stderr).toBe(0);
  }, 240_000);

  it('a pair stored unencrypted before the key was set is rewritten encrypted, without a rotation', async () => {
    const { sim, schema, schemaArgs, env, sync, open, secrets } = await ciSetup(dialect, 63);
    sim.control.expireAccessTokens();
    const plain = await sync();
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('rotations are kept in the warehouse UNENCRYPTED');
    expect((await open((w) => w.readCredentials(sim.url)))?.refresh_token).toBe(sim.credentials.refresh_token);
    // The scan finds a token stored in plain text.
    expect(await open((w) => plainTextHits(w, schema, secrets(sim)))).toEqual([
      '_grantflow_credentials.access_token',
      '_grantflow_credentials.client_secret',
      '_grantflow_credentials.refresh_token',
    ]);

    const doctor = await runCliInProcess(['doctor', ...schemaArgs], { env });
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).toMatch(
      /^warn {2}credentials {2}.* UNENCRYPTED .*: set GRANTFLOW_STATE_KEY to encrypt them/m,
    );
    expect(doctor.stdout).toMatch(
      /^warn {2}stored pair {2}the pair stored for .* is UNENCRYPTED: set GRANTFLOW_STATE_KEY/m,
    );

    // The access token is still valid (an hour): this run refreshes nothing, yet the pair it read ends up sealed.
    const keyed = await sync({ GRANTFLOW_STATE_KEY: key });
    expect(keyed.code, keyed.stderr).toBe(0);
    expect(sim.control.tokenCounts().rotated).toBe(1);
    expect((await open((w) => w.readCredentials(sim.url)))?.refresh_token).toMatch(/^sealed:v1:/);
    expect(await open((w) => plainTextHits(w, schema, secrets(sim)))).toEqual([]);

    sim.control.expireAccessTokens();
    const next = await sync({ GRANTFLOW_STATE_KEY: key });
    expect(next.code, next.stderr).toBe(0);
    expect(sim.control.tokenCounts().rotated).toBe(2);
  }, 240_000);
});

describe('GRANTFLOW_STATE_KEY that is too short', () => {
  it('exit 2 with one line, before anything is written', async () => {
    const { sync, warehouse } = await ciSetup('duckdb', 64);
    const r = await sync({ GRANTFLOW_STATE_KEY: 'short' });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'grantflow: GRANTFLOW_STATE_KEY is too short (5 characters): use at least 16, for example the output of `openssl rand -base64 32`',
    ]);
    expect(existsSync(warehouse)).toBe(false);
  });
});
