/**
 * Issue 3: credentials from read-only GRANTFLOW_* variables (a CI runner's secrets). The rotated pair goes into the
 * warehouse, and a later run with the same, now used-up, variables reads it from there and works.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { join } from 'node:path';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { copyFileSync, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import {
  type CliResult,
  postgresSchema,
  proxySite,
  runCli,
  siteWithWarehouse,
  startSite,
  syncCliArgs,
  tempDir,
} from '../support/harness.ts';
import { killWhen } from '../support/faults.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

/**
 * What a CI job sets: the site, the warehouse and the four credential variables of the site's first set. These runs
 * are about where the credentials come from and go, so they leave out models, data tests and landed pages, and sync
 * only the programs list unless `everyStream` (a run that must still be going when the test acts on it): each of
 * those would cost seconds of CPU per run here and change nothing the credentials do.
 */
function ciEnvironment(
  sim: SimulatorHandle,
  warehouse: string,
  dir: string,
  streams: 'programs' | 'everyStream' = 'programs',
): NodeJS.ProcessEnv {
  const initial = sim.credentials;
  return {
    GRANTFLOW_SITE: sim.url,
    GRANTFLOW_WAREHOUSE: warehouse,
    GRANTFLOW_CLIENT_ID: initial.client_id,
    GRANTFLOW_CLIENT_SECRET: initial.client_secret,
    GRANTFLOW_ACCESS_TOKEN: initial.access_token,
    GRANTFLOW_REFRESH_TOKEN: initial.refresh_token,
    GRANTFLOW_SNAPSHOT: 'false',
    GRANTFLOW_MODELS: 'false',
    GRANTFLOW_LAND_RAW: 'false',
    GRANTFLOW_RAW_DIR: join(dir, 'raw'),
    GRANTFLOW_RATE: '500',
    ...(streams === 'programs' ? { GRANTFLOW_STREAMS: 'programs' } : {}),
  };
}

/** The flags of ciEnvironment's small run, for a run given a credentials file instead. */
const smallRunFlags = ['--models', 'false', '--land-raw', 'false', '--streams', 'programs'];

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** A site, a warehouse of `dialect` and its stored pair; a test makes a sync rotate by `expireAccessTokens` first. */
async function rotatingSiteOf(dialect: string, seed: number) {
  // Tokens of the simulator's usual life: one that expired between its refresh and the request after it would be
  // refused as the wrong site, which a loaded machine (a warehouse opened between the two) made happen at 2 s.
  const sim = await startSite({ scale: 'tiny', seed, latency: { ms: 10 } });
  const dir = await tempDir();
  cleanup.push(() => sim.close(), dir.remove);
  let warehouse = join(dir.path, 'w.duckdb');
  let schemaArgs: string[] = [];
  if (dialect === 'postgres') {
    const pg = await postgresSchema();
    cleanup.push(pg.drop);
    warehouse = pg.url;
    schemaArgs = ['--schema', pg.schema];
  }
  const readStored = async () => {
    const w = await openWarehouse(warehouse, { schema: schemaArgs[1], logger: silentLogger });
    try {
      return await w.readCredentials(sim.url);
    } finally {
      await w.close();
    }
  };
  return { sim, dir, warehouse, schemaArgs, readStored };
}

describe.each(['duckdb', 'postgres'])('credentials from the environment (%s)', (dialect) => {
  const rotatingSite = (seed: number) => rotatingSiteOf(dialect, seed);

  /** A rotating site (see rotatingSiteOf) synced once with the CI secrets, which that sync used up. */
  async function syncedOnce(seed: number) {
    const site = await rotatingSite(seed);
    const secrets = ciEnvironment(site.sim, site.warehouse, site.dir.path);
    site.sim.control.expireAccessTokens();
    const first = await runCliInProcess(['sync', ...site.schemaArgs], { env: secrets });
    expect(first.code, first.stderr).toBe(0);
    return { ...site, secrets };
  }

  it('are rotated into the warehouse, and the next run reads them from there', async () => {
    const { sim, dir, warehouse, schemaArgs, readStored } = await rotatingSite(31);
    const initial = sim.credentials;
    const env = ciEnvironment(sim, warehouse, dir.path);
    // The first request refreshes: a sync that ends within the token's life would otherwise rotate nothing.
    sim.control.expireAccessTokens();
    const first = await runCliInProcess(['sync', ...schemaArgs], { env });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    // The initial refresh token was used up by the first refresh: only the warehouse copy works now.
    const stored = await readStored();
    expect(stored?.refresh_token).toBeDefined();
    expect(stored?.refresh_token).not.toBe(initial.refresh_token);
    expect(stored?.client_id).toBe(initial.client_id);

    const second = await runCliInProcess(['sync', ...schemaArgs], { env });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/SUCCEEDED/);
    const output = first.stdout + first.stderr + second.stdout + second.stderr;
    for (const secret of [
      initial.client_secret,
      initial.access_token,
      initial.refresh_token,
      stored!.refresh_token,
      stored!.access_token,
    ]) {
      expect(output.includes(secret)).toBe(false);
    }
    expect(existsSync(join(dir.path, 'creds.json'))).toBe(false);
  });

  it('a new set put in the variables wins over the stored rotations of the old one, also with the same client id', async () => {
    const { sim, dir, warehouse, schemaArgs, readStored: stored } = await rotatingSite(35);
    sim.control.expireAccessTokens(); // the first run must rotate, so there are stored rotations of the old set
    const first = await runCliInProcess(['sync', ...schemaArgs], { env: ciEnvironment(sim, warehouse, dir.path) });
    expect(first.code, first.stderr).toBe(0);
    const rotatedOld = await stored();

    // An administrator generates a new set (the old one dies); this site keeps the client id and secret.
    const renewed = sim.control.issueCredentials({ sameClient: true });
    expect(renewed.client_id).toBe(rotatedOld?.client_id);
    // The first request must refresh: the variables' pair is not expired otherwise.
    sim.control.expireAccessTokens();
    const env = {
      ...ciEnvironment(sim, warehouse, dir.path),
      GRANTFLOW_ACCESS_TOKEN: renewed.access_token,
      GRANTFLOW_REFRESH_TOKEN: renewed.refresh_token,
    };
    const second = await runCliInProcess(['sync', ...schemaArgs], { env });
    expect(second.code, second.stderr).toBe(0);
    const rotatedNew = await stored();
    expect(rotatedNew?.refresh_token).not.toBe(rotatedOld?.refresh_token);
    expect(rotatedNew?.refresh_token).not.toBe(renewed.refresh_token);

    // The variables are unchanged and used up: the next run goes on from the new set's rotations.
    sim.control.expireAccessTokens();
    const third = await runCliInProcess(['sync', ...schemaArgs], { env });
    expect(third.code, third.stderr).toBe(0);
  });

  it('a site that moved goes on with --site-moved from the pair rotated at its old address', async () => {
    // The CI secrets, set once: the site's first set.
    const { sim, schemaArgs, readStored: stored, secrets } = await syncedOnce(36);
    // The variables' pair is used up: the live one is the warehouse's, stored for the old address.
    expect((await stored())?.refresh_token).not.toBe(secrets.GRANTFLOW_REFRESH_TOKEN);
    const moved = await proxySite(sim.url, () => undefined);
    cleanup.push(moved.close);
    const env = { ...secrets, GRANTFLOW_SITE: moved.url };
    sim.control.expireAccessTokens();
    const accepted = await runCliInProcess(['sync', ...schemaArgs, '--site-moved'], { env });
    expect(accepted.code, accepted.stderr).toBe(0);
    sim.control.expireAccessTokens();
    const next = await runCliInProcess(['sync', ...schemaArgs], { env });
    expect(next.code, next.stderr).toBe(0);
  });

  it('--site-moved after an attempt at the new address failed uses the pair rotated at the old one since', async () => {
    const { sim, schemaArgs, readStored: stored, secrets } = await syncedOnce(37);
    // The new address answers, but not yet as the API (its DNS set before the site moved): the attempt fails.
    let ready = false;
    const moved = await switchableProxy(sim.url, () => ready);
    cleanup.push(moved.close);
    const env = { ...secrets, GRANTFLOW_SITE: moved.url };
    const early = await runCliInProcess(['sync', ...schemaArgs, '--site-moved'], { env });
    expect(early.code, early.stderr).toBe(2);
    // The site has not moved after all: syncs at the old address go on, each rotating the pair stored there.
    sim.control.expireAccessTokens();
    const old = await runCliInProcess(['sync', ...schemaArgs], { env: secrets });
    expect(old.code, old.stderr).toBe(0);
    const live = await stored();
    // Now it moves: the pair rotated at the old address since is the live one, not what the failed attempt saw.
    ready = true;
    sim.control.expireAccessTokens();
    const accepted = await runCliInProcess(['sync', ...schemaArgs, '--site-moved'], { env });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(live?.refresh_token).toBeDefined();
  });

  it('--site-moved after an attempt that rotated the pair at the new address and then failed goes on from that pair', async () => {
    const { sim, schemaArgs, secrets } = await syncedOnce(38);
    // The attempt refreshes at the new address (the old address's pair dies), then the API answers 404 there.
    let refreshed = false;
    let ready = false;
    const moved = await switchableProxy(sim.url, (path) => {
      if (path.startsWith('/api/o/token/')) refreshed = true;
      else if (refreshed && !ready) return false;
      return true;
    });
    cleanup.push(moved.close);
    const env = { ...secrets, GRANTFLOW_SITE: moved.url };
    sim.control.expireAccessTokens();
    const early = await runCliInProcess(['sync', ...schemaArgs, '--site-moved'], { env });
    expect(early.code, early.stderr).toBe(2);
    expect(refreshed).toBe(true);
    ready = true;
    sim.control.expireAccessTokens();
    const accepted = await runCliInProcess(['sync', ...schemaArgs, '--site-moved'], { env });
    expect(accepted.code, accepted.stderr).toBe(0);
  });
});

describe.each(['duckdb', 'postgres'])(
  'credentials from the environment, the same site spelt otherwise (%s)',
  (dialect) => {
    it('a sync at the same address spelt otherwise, which the one-site guard accepts, goes on from the stored pair', async () => {
      const { sim, dir, warehouse, schemaArgs } = await rotatingSiteOf(dialect, 39);
      const secrets = ciEnvironment(sim, warehouse, dir.path);
      sim.control.expireAccessTokens();
      const first = await runCliInProcess(['sync', ...schemaArgs], { env: secrets });
      expect(first.code, first.stderr).toBe(0);
      // The scheme's case (as host case, a default port or a trailing slash) does not make another site.
      const env = { ...secrets, GRANTFLOW_SITE: sim.url.replace(/^http:/, 'HTTP:') };
      sim.control.expireAccessTokens();
      const second = await runCliInProcess(['sync', ...schemaArgs], { env });
      expect(second.code, second.stderr).toBe(0);
    });
  },
);

/** A proxy to `target` that answers 404 to a request whose path `passes` refuses. */
async function switchableProxy(
  target: string,
  passes: (path: string) => boolean,
): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    if (!passes(req.url ?? '/')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"detail":"Not found."}');
      return;
    }
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describe('credentials from the environment, a sync killed after a rotation', () => {
  it('leave the rotated pair in the main DuckDB file, not only in its WAL (a cache of that file alone works)', async () => {
    const sim = await startSite({ scale: 'tiny', seed: 32, tokenTtlSeconds: 1, latency: { ms: 10 } });
    const dir = await tempDir();
    cleanup.push(() => sim.close(), dir.remove);
    // Every stream: the killed run must still be going a few requests after the refresh.
    const env = (warehouse: string): NodeJS.ProcessEnv => ciEnvironment(sim, warehouse, dir.path, 'everyStream');
    const killedAt = join(dir.path, 'killed.duckdb');
    let afterRefresh: number | null = null;
    sim.control.expireAccessTokens(); // the rotation comes first, not only once the token's second has passed
    const killed = await runCli(['sync'], {
      env: env(killedAt),
      onSpawn: (child) =>
        killWhen(child, () => {
          const counts = sim.control.counts();
          if (afterRefresh === null && (counts.byTemplate['POST /api/o/token/'] ?? 0) >= 1) afterRefresh = counts.total;
          // No request starts before the rotated pair is saved: a few requests later, the save has finished.
          return afterRefresh !== null && counts.total >= afterRefresh + 3;
        }),
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // What a cache of data/warehouse.duckdb alone restores: the main file, without the .wal beside it.
    const restored = join(dir.path, 'restored.duckdb');
    copyFileSync(killedAt, restored);
    const next = await runCliInProcess(['sync'], { env: env(restored) });
    // It may resume the killed run (a warning), but the credentials work: no error line.
    expect(next.stderr).not.toMatch(/^grantflow: /m);
    expect(next.code, next.stderr).toBe(0);
  });
});

describe('credentials from the environment, a --site where nothing answers', () => {
  it('exit 2 before the warehouse is created', async () => {
    const dir = await tempDir();
    cleanup.push(dir.remove);
    const warehouse = join(dir.path, 'w.duckdb');
    const result = await runCliInProcess(['sync'], {
      env: {
        GRANTFLOW_SITE: 'http://127.0.0.1:9',
        GRANTFLOW_WAREHOUSE: warehouse,
        GRANTFLOW_CLIENT_ID: 'id',
        GRANTFLOW_CLIENT_SECRET: 'secret-not-used',
        GRANTFLOW_ACCESS_TOKEN: 'access-not-used',
        GRANTFLOW_REFRESH_TOKEN: 'refresh-not-used',
        GRANTFLOW_SNAPSHOT: 'false',
        GRANTFLOW_LAND_RAW: 'false',
      },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^grantflow: nothing answers at http:\/\/127\.0\.0\.1:9 [^\n]*--site\n$/);
    expect(existsSync(warehouse)).toBe(false);
    expect(existsSync(dir.path + '/w.duckdb.wal')).toBe(false);
  });
});

describe.each(['duckdb', 'postgres'])(
  'credentials from the environment, a first run (%s, no warehouse yet)',
  (dialect) => {
    /** A warehouse target that does not exist yet: a DuckDB file, or a Postgres schema; `exists` says if it does now. */
    async function newWarehouse(dir: string) {
      if (dialect === 'duckdb') {
        const file = join(dir, 'w.duckdb');
        return { target: file, schemaArgs: [], exists: async () => existsSync(file) || existsSync(`${file}.wal`) };
      }
      const schema = await postgresSchema();
      cleanup.push(schema.drop);
      const exists = async () => {
        const client = new pg.Client({ connectionString: schema.url });
        await client.connect();
        try {
          return (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema.schema])).rowCount === 1;
        } finally {
          await client.end();
        }
      };
      return { target: schema.url, schemaArgs: ['--schema', schema.schema], exists };
    }

    it('a secret the site rejects: exit 2, no warehouse created', async () => {
      const sim = await startSite({ scale: 'tiny', seed: 34 });
      const dir = await tempDir();
      cleanup.push(() => sim.close(), dir.remove);
      const warehouse = await newWarehouse(dir.path);
      sim.control.expireAccessTokens(); // the check must refresh, and the site rejects the secret
      const r = await runCliInProcess(['sync', ...warehouse.schemaArgs], {
        env: { ...ciEnvironment(sim, warehouse.target, dir.path), GRANTFLOW_CLIENT_SECRET: 'wrong' },
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^grantflow: .*invalid_client.*update the CI secrets/);
      expect(await warehouse.exists()).toBe(false);
    });

    it('a refresh during the check is kept: the warehouse created after it holds the rotated pair', async () => {
      const sim = await startSite({ scale: 'tiny', seed: 35 });
      const dir = await tempDir();
      cleanup.push(() => sim.close(), dir.remove);
      const warehouse = await newWarehouse(dir.path);
      const env = ciEnvironment(sim, warehouse.target, dir.path);
      const initialRefresh = env.GRANTFLOW_REFRESH_TOKEN;
      sim.control.expireAccessTokens(); // the first request refreshes: the variables' refresh token dies
      const first = await runCliInProcess(['sync', ...warehouse.schemaArgs], { env });
      expect(first.code, first.stderr).toBe(0);
      const w = await openWarehouse(warehouse.target, { schema: warehouse.schemaArgs[1], logger: silentLogger });
      const stored = await w.readCredentials(sim.url);
      await w.close();
      expect(stored?.refresh_token).toBeDefined();
      expect(stored?.refresh_token).not.toBe(initialRefresh);
      // The same variables again: only the pair kept in the warehouse can work now.
      sim.control.expireAccessTokens();
      const second = await runCliInProcess(['sync', ...warehouse.schemaArgs], { env });
      expect(second.code, second.stderr).toBe(0);
    });

    // However long the winner takes to store the rotated pair (a loaded machine), the loser waits for it: both mark
    // their refresh before sending it (RefreshMark), and the loser waits for the winner's mark to end.
    it('two at once: one syncs, the other exits 1 saying another run holds the rotated pair; the next run works', async () => {
      const sim = await startSite({ scale: 'tiny', seed: 37, latency: { ms: 20 } });
      const dir = await tempDir();
      cleanup.push(() => sim.close(), dir.remove);
      const warehouse = await newWarehouse(dir.path);
      // Both checks refresh with the variables' refresh token: each refresh is held until both are asked for, so both
      // runs found no warehouse before either stored a pair; the site rotates once and rejects the other as used.
      let asked = 0;
      let bothAsked!: () => void;
      const barrier = new Promise<void>((resolve) => (bothAsked = resolve));
      const proxy = await proxySite(sim.url, async (url) => {
        if (url.pathname !== '/api/o/token/' || asked >= 2) return;
        if (++asked === 2) bothAsked();
        await barrier;
      });
      cleanup.push(proxy.close);
      // Every stream: the winner must still be running when the other finds the pair it stored. The winner's save of
      // the rotated pair is held 3 s, longer than the loser's own retries (1 s) would wait for it.
      const env = {
        ...ciEnvironment(sim, warehouse.target, dir.path, 'everyStream'),
        GRANTFLOW_SITE: proxy.url,
        GRANTFLOW_TEST_PAUSE_AT: 'first run rotation saving',
        GRANTFLOW_TEST_PAUSE_MS: '3000',
      };
      sim.control.expireAccessTokens();
      const sync = (): Promise<CliResult> => runCli(['sync', ...warehouse.schemaArgs], { env });
      const [a, b] = await Promise.all([sync(), sync()]);
      const [won, lost] = a.code === 0 ? [a, b] : [b, a];
      expect(won.code, won.stderr).toBe(0);
      // Not "generate a new credential set" (exit 2): the pair the other run rotated is fine, and kept.
      expect(lost.code, lost.stderr).toBe(1);
      // Log lines aside (a warning when it adopted the stored pair), one line says why.
      const lines = lost.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));
      expect(lines, lost.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(
        /in use by another grantflow run \([^)]*grantflow sync \(pid \d+\)\); wait for it to finish/,
      );
      expect(lost.stderr).not.toMatch(/invalid_grant|new credential set|not a grantflow run/);
      // The same variables again: the pair the winner stored works.
      sim.control.expireAccessTokens();
      const { GRANTFLOW_TEST_PAUSE_AT: _at, GRANTFLOW_TEST_PAUSE_MS: _ms, ...unpaused } = env;
      const next = await runCliInProcess(['sync', ...warehouse.schemaArgs], { env: unpaused });
      expect(next.code, next.stderr).toBe(0);
    });

    it('killed right after the check refreshed: the rotated pair was stored first, so the next run works', async () => {
      // Each request is held 50 ms, so the kill lands while the check's first request after the refresh is in flight.
      const sim = await startSite({ scale: 'tiny', seed: 36, latency: { ms: 50 } });
      const dir = await tempDir();
      cleanup.push(() => sim.close(), dir.remove);
      const warehouse = await newWarehouse(dir.path);
      // Every stream: the run must still be going when a request after the refresh is in flight.
      const env = ciEnvironment(sim, warehouse.target, dir.path, 'everyStream');
      sim.control.expireAccessTokens(); // the check's first request refreshes: the variables' refresh token dies
      let refreshedAt: number | null = null;
      const killed = await runCli(['sync', ...warehouse.schemaArgs], {
        env,
        onSpawn: (child) =>
          killWhen(child, () => {
            const counts = sim.control.counts();
            if (refreshedAt === null && (counts.byTemplate['POST /api/o/token/'] ?? 0) >= 1) refreshedAt = counts.total;
            // A request after the refresh: the new pair must be stored by now (a CI job cancelled here).
            return refreshedAt !== null && counts.total > refreshedAt;
          }),
      });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const next = await runCliInProcess(['sync', ...warehouse.schemaArgs], { env });
      expect(next.stderr).not.toMatch(/invalid_grant/);
      expect(next.code, next.stderr).toBe(0);
    });
  },
);

describe('--credentials FILE next to GRANTFLOW_CLIENT_* variables', () => {
  it('the flag wins: the file is used and rotated, the variables are ignored', async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 32, tokenTtlSeconds: 1, latency: { ms: 10 } });
    cleanup.push(site.remove);
    const env = { GRANTFLOW_CLIENT_ID: 'x' };
    const initialRefresh = site.sim.credentials.refresh_token;
    site.sim.control.expireAccessTokens(); // the first request rotates the pair, however fast the sync
    const sync = await runCliInProcess(
      [...syncCliArgs(site.sim.url, site.dir, { credentials: site.credentials }), ...smallRunFlags],
      { env },
    );
    expect(sync.stderr).toBe('');
    expect(sync.code).toBe(0);
    // The file was used (its refresh token rotated), not the warehouse store the variables would have chosen.
    const saved = JSON.parse(await readFile(site.credentials, 'utf8')) as { refresh_token: string };
    expect(saved.refresh_token).not.toBe(initialRefresh);

    const doctor = await runCliInProcess(['doctor', '--site', site.sim.url, '--credentials', site.credentials], {
      env,
    });
    expect(doctor.stdout).toMatch(/^ok\s+credentials\s+.*creds\.json \(mode 600\)/m);
    // The token lives 1 s: accepted, or refused as expired (doctor never refreshes it), it is the file's.
    expect(doctor.stdout).toMatch(/^(?:ok|warn)\s+site\s+.* the access token in \S*creds\.json /m);
  });

  it('GRANTFLOW_CREDENTIALS next to them is ambiguous: exit 2, one line naming both, nothing written', async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 33 });
    cleanup.push(site.remove);
    const args = syncCliArgs(site.sim.url, site.dir).filter(
      (a, i, all) => a !== '--credentials' && all[i - 1] !== '--credentials',
    );
    const r = await runCliInProcess(args, {
      env: { GRANTFLOW_CREDENTIALS: site.credentials, GRANTFLOW_CLIENT_ID: 'x' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/GRANTFLOW_CREDENTIALS names a file and GRANTFLOW_CLIENT_ID is set/);
    expect(existsSync(join(site.dir, 'warehouse.duckdb'))).toBe(false);
  });
});

describe('credentials from the environment that the site rejects', () => {
  it('exit 2 with one line saying to issue a new set and update the CI secrets, no secret in it', async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 34 });
    cleanup.push(site.remove);
    const creds = site.sim.credentials;
    const env = {
      GRANTFLOW_CLIENT_ID: creds.client_id,
      GRANTFLOW_CLIENT_SECRET: creds.client_secret,
      GRANTFLOW_ACCESS_TOKEN: 'access-token-that-expired-0000',
      GRANTFLOW_REFRESH_TOKEN: 'refresh-token-already-used-0000',
    };
    const args = syncCliArgs(site.sim.url, site.dir).filter(
      (a, i, all) => a !== '--credentials' && all[i - 1] !== '--credentials',
    );
    const r = await runCliInProcess(args, { env });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/invalid_grant.*generate a new credential set in the site's integration settings/);
    expect(r.stderr).toMatch(
      /update the CI secrets GRANTFLOW_CLIENT_ID, GRANTFLOW_CLIENT_SECRET, GRANTFLOW_ACCESS_TOKEN and GRANTFLOW_REFRESH_TOKEN/,
    );
    expect(r.stderr).not.toMatch(/put it in the warehouse|seeded from/);
    for (const value of [...Object.values(env), creds.access_token, creds.refresh_token].filter(
      (v) => v !== creds.client_id,
    ))
      expect(r.stderr).not.toContain(value);
  });
});
