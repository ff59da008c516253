/**
 * `grantflow doctor` checks what a scheduled sync would meet hours later: a client id or secret the site rejects
 * (found without rotating anything, while the access token still works), an expired access token (reported, never
 * refreshed: a refresh rotates the pair), every sync setting, the raw page directory, a credentials file others may
 * read, a DuckDB warehouse keeping the pair rotated from GRANTFLOW_* variables, a site where nothing answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command } from 'commander';
import { createServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { registerDoctor } from '../../src/cli/commands/doctor.ts';
import { registerSync } from '../../src/cli/commands/sync.ts';
import { settingsSchema } from '../../src/config/settings.ts';
import { runSync } from '../../src/pipeline/sync.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import {
  postgresSchema,
  siteWithWarehouse,
  startSite,
  syncCliArgs,
  syncOnce,
  syncWithoutModels,
  tempDir,
  writeCredentials,
} from '../support/harness.ts';
import { suiteDuckdbThreads } from '../support/suite-duckdb.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

let sim: SimulatorHandle;
let dir: { path: string; remove: () => Promise<void> };
let credentials: string;

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 71 });
  dir = await tempDir();
  credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
});
afterAll(async () => {
  await sim.close();
  await dir.remove();
});

/** A sync command line for this site, with `doctor` in place of `sync`. */
const doctorArgs = (extra: string[] = [], creds = credentials): string[] => [
  'doctor',
  ...syncCliArgs(sim.url, dir.path, { credentials: creds }).slice(1),
  ...extra,
];

describe('grantflow doctor, the client id and secret', () => {
  it('a wrong client secret while the access token is valid: exit 2, and nothing rotated', async () => {
    const wrong = join(dir.path, 'wrong-secret.json');
    await writeFile(wrong, JSON.stringify({ ...sim.credentials, client_secret: 'not-the-secret-0123456789' }), {
      mode: 0o600,
    });
    const before = sim.control.tokenCounts();
    const live = sim.credentials;
    const r = await runCliInProcess(doctorArgs([], wrong));
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toMatch(
      /^FAIL {2}client {7}the site rejected the client id \/ client secret \(invalid_client, checked with a made-up refresh token, so nothing was rotated\); .* put them in .*wrong-secret\.json$/m,
    );
    // The access token still works, which is why a check of the API alone passed such a setup.
    expect(r.stdout).toMatch(
      /^ok {4}site {9}.* answers and accepts the access token in \S+wrong-secret\.json \(nothing was refreshed\)$/m,
    );
    expect(r.stdout).not.toContain('not-the-secret-0123456789');
    const after = sim.control.tokenCounts();
    expect(after.rotated ?? 0).toBe(before.rotated ?? 0);
    expect(after.invalid_client).toBe((before.invalid_client ?? 0) + 1);
    expect(sim.credentials).toEqual(live);
    expect(JSON.parse(await readFile(wrong, 'utf8'))).toMatchObject({ refresh_token: live.refresh_token });
  });

  it('the same from GRANTFLOW_* variables: exit 2, nothing rotated', async () => {
    const live = sim.credentials;
    const before = sim.control.tokenCounts();
    const env = {
      GRANTFLOW_CLIENT_ID: live.client_id,
      GRANTFLOW_CLIENT_SECRET: 'not-the-secret-0123456789',
      GRANTFLOW_ACCESS_TOKEN: live.access_token,
      GRANTFLOW_REFRESH_TOKEN: live.refresh_token,
    };
    const r = await runCliInProcess(['doctor', '--site', sim.url, '--warehouse', join(dir.path, 'env.duckdb')], {
      env,
    });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toMatch(/^FAIL {2}client {7}.*\(invalid_client.*update the CI secrets GRANTFLOW_CLIENT_ID/m);
    expect(sim.control.tokenCounts().rotated ?? 0).toBe(before.rotated ?? 0);
    expect(sim.credentials).toEqual(live);
  });

  it('the right ones: ok, told apart by invalid_grant for a made-up refresh token, nothing rotated', async () => {
    const before = sim.control.tokenCounts();
    const r = await runCliInProcess(doctorArgs());
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^ok {4}client {7}the site knows the client id and secret/m);
    const after = sim.control.tokenCounts();
    expect(after.invalid_grant).toBe((before.invalid_grant ?? 0) + 1);
    expect(after.rotated ?? 0).toBe(before.rotated ?? 0);
  });
});

describe('grantflow doctor, a site whose token endpoint answers otherwise than the simulator', () => {
  /** The API's 401 for the programs list, and `token` for any token request. */
  async function fakeSite(token: {
    status: number;
    body: string;
  }): Promise<{ url: string; close: () => Promise<void> }> {
    const server = createServer((req, res) => {
      const [status, body] = req.url?.startsWith('/api/o/token/')
        ? [token.status, token.body]
        : [401, '{"detail": "Authentication credentials were not provided."}'];
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise((done) => server.close(() => done())),
    };
  }
  const env = {
    GRANTFLOW_CLIENT_ID: 'client',
    GRANTFLOW_CLIENT_SECRET: 'secret-value-0123456789',
    GRANTFLOW_ACCESS_TOKEN: 'access-value-0123456789',
    GRANTFLOW_REFRESH_TOKEN: 'refresh-value-0123456789',
  };

  it('invalid_client with the status RFC 6749 gives it (401) fails the check too', async () => {
    const site = await fakeSite({ status: 401, body: '{"error": "invalid_client"}' });
    try {
      const r = await runCliInProcess(['doctor', '--site', site.url, '--warehouse', join(dir.path, 'fake.duckdb')], {
        env,
      });
      expect(r.code, r.stdout).toBe(2);
      expect(r.stdout).toMatch(/^FAIL {2}client {7}the site rejected the client id \/ client secret \(invalid_client/m);
    } finally {
      await site.close();
    }
  });

  it('an answer that tells neither is a warning (exit 0), naming what the site said', async () => {
    const site = await fakeSite({ status: 400, body: '{"error": "invalid_request"}' });
    try {
      const r = await runCliInProcess(['doctor', '--site', site.url, '--warehouse', join(dir.path, 'fake.duckdb')], {
        env,
      });
      expect(r.code, r.stdout).toBe(0);
      expect(r.stdout).toMatch(
        /^warn {2}client {7}could not tell whether the client id and secret are right: the token endpoint answered a made-up refresh token with HTTP 400 \(invalid_request\)/m,
      );
    } finally {
      await site.close();
    }
  });
});

describe('grantflow doctor, the settings of a sync', () => {
  it('takes every option sync takes', () => {
    const program = new Command();
    registerSync(program);
    registerDoctor(program);
    const optionsOf = (name: string): string[] =>
      program.commands
        .find((c) => c.name() === name)!
        .options.map((o) => o.long ?? '')
        .sort();
    expect(optionsOf('sync').length).toBeGreaterThan(15);
    expect(optionsOf('doctor')).toEqual(optionsOf('sync'));
  });

  it('checks a pasted sync command line as that sync would run, the raw page directory included', async () => {
    const pasted = [
      ...['--streams', 'applications,application_tasks', '--full-refresh', '--full-refresh-after-days', '3'],
      ...['--per-page', '50', '--concurrency', '2', '--site-time-zone', 'Europe/Paris', '--retain-snapshots', '3'],
      ...['--models', 'false', '--land-raw', 'true', '--site-moved', '--duckdb-memory-limit', '128MB'],
    ];
    const r = await runCliInProcess(doctorArgs(pasted));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ok {4}streams {6}applications, application_tasks, full refresh$/m);
    expect(r.stdout).toContain(`ok    raw pages    ${join(dir.path, 'raw')} is writable\n`);

    const typo = await runCliInProcess(doctorArgs(['--streams', 'applicatons']));
    expect(typo.code).toBe(2);
    expect(typo.stdout).toMatch(/^FAIL {2}streams {6}unknown stream "applicatons"; known streams: /m);
  });

  it('fails the raw pages check (exit 2) for a directory that cannot be made', async () => {
    const file = join(dir.path, 'a-file');
    await writeFile(file, 'x');
    const r = await runCliInProcess(doctorArgs(['--raw-dir', join(file, 'raw')]));
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^FAIL {2}raw pages {4}raw page directory .*a-file\/raw is not writable/m);
    const off = await runCliInProcess(doctorArgs(['--raw-dir', join(file, 'raw'), '--land-raw', 'false']));
    expect(off.code, off.stdout).toBe(0);
    expect(off.stdout).toMatch(/^ok {4}raw pages {4}not kept \(--land-raw false\)$/m);
  });

  it('warns (exit 0) about a credentials file others may read', async () => {
    const shared = join(dir.path, 'shared');
    await mkdir(shared);
    const open = await writeCredentials(sim, join(shared, 'creds.json'));
    await chmod(open, 0o644);
    const r = await runCliInProcess(doctorArgs([], open));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^warn {2}credentials {2}.*shared\/creds\.json \(mode 644\): other users may read or change it; run chmod 600 /m,
    );
    expect(r.stdout).not.toMatch(/^ok {4}credentials/m);
  });
});

describe('grantflow doctor, the site time zone', () => {
  it('says how many timestamps the last run read without a zone and in which zone; warns when set otherwise', async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 72 });
    try {
      const result = await syncOnce(site.sim, { credentials: site.credentials, warehouse: site.warehouse });
      expect(result.status).toBe('succeeded');
      const naive = result.streams.reduce((n, s) => n + (s.naiveTimestamps ?? 0), 0);
      expect(naive).toBeGreaterThan(0);
      const args = (zone: string): string[] => [
        'doctor',
        '--site',
        site.sim.url,
        '--credentials',
        site.credentials,
        '--warehouse',
        site.warehouse,
        '--snapshot',
        'false',
        '--land-raw',
        'false',
        '--site-time-zone',
        zone,
      ];
      const same = await runCliInProcess(args('UTC'));
      expect(same.code, same.stdout + same.stderr).toBe(0);
      expect(same.stdout).toContain(
        `ok    time zone    timestamps without a zone are read in UTC (--site-time-zone); the last run (${result.runId}) read ${naive} without a zone in UTC\n`,
      );
      const other = await runCliInProcess(args('Europe/Paris'));
      expect(other.code, other.stdout + other.stderr).toBe(0);
      expect(other.stdout).toContain(
        `warn  time zone    the last run (${result.runId}) read ${naive} without a zone in UTC, but this setup reads them in Europe/Paris: one of the two is wrong\n`,
      );
    } finally {
      await site.remove();
    }
  });
});

describe('grantflow doctor with an expired access token refreshes nothing', () => {
  it('a credentials file: a warn line saying the next sync refreshes it, exit 0, no refresh, the file unchanged', async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 73 });
    try {
      // A laptop check of a copy of the pair a scheduled sync uses: a rotation here would kill the original.
      const copy = join(site.dir, 'copy-of-creds.json');
      await copyFile(site.credentials, copy);
      const [original, copied] = [await readFile(site.credentials), await readFile(copy)];
      site.sim.control.expireAccessTokens();
      const before = site.sim.control.tokenCounts();
      const live = site.sim.credentials;
      const r = await runCliInProcess([
        ...['doctor', '--site', site.sim.url, '--credentials', copy, '--warehouse', site.warehouse],
        ...['--snapshot', 'false', '--land-raw', 'false'],
      ]);
      expect(await readFile(copy)).toEqual(copied);
      expect(await readFile(site.credentials)).toEqual(original);
      const after = site.sim.control.tokenCounts();
      expect(after.rotated ?? 0).toBe(before.rotated ?? 0);
      expect(after.invalid_grant).toBe((before.invalid_grant ?? 0) + 1); // the client check's made-up token only
      expect(site.sim.credentials).toEqual(live);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        /^warn {2}site {9}\S+ refused the access token in \S+copy-of-creds\.json \(HTTP 401: expired, or revoked\); doctor refreshes nothing: the next sync refreshes it with the refresh token, which rotates the pair/m,
      );
      expect(r.stdout).toMatch(/^ok {4}client {7}/m);
      expect(r.stdout).not.toMatch(/^FAIL/m);

      // The original pair still works: the sync refreshes it once and keeps the rotated pair in its file.
      const sync = await syncWithoutModels(site.sim, {
        credentials: site.credentials,
        warehouse: site.warehouse,
        streams: ['programs'],
      });
      expect(sync.status).toBe('succeeded');
      expect(site.sim.control.tokenCounts().rotated).toBe((before.rotated ?? 0) + 1);
      expect(JSON.parse(await readFile(site.credentials, 'utf8'))).toEqual(site.sim.credentials);
    } finally {
      await site.remove();
    }
  });

  describe.each(['duckdb', 'postgres'])(
    'GRANTFLOW_* variables, the rotated pair stored in the warehouse (%s)',
    (engine) => {
      it('leaves the stored pair as it was; warns about a DuckDB file a runner may not keep', async () => {
        const sim = await startSite({ scale: 'tiny', seed: 74, latency: { ms: 5 } });
        const runner = await tempDir();
        const pg = engine === 'postgres' ? await postgresSchema() : null;
        try {
          const warehouse = pg ? pg.url : join(runner.path, 'w.duckdb');
          const schemaArgs = pg ? ['--schema', pg.schema] : [];
          const initial = sim.credentials;
          const env: NodeJS.ProcessEnv = {
            GRANTFLOW_CLIENT_ID: initial.client_id,
            GRANTFLOW_CLIENT_SECRET: initial.client_secret,
            GRANTFLOW_ACCESS_TOKEN: initial.access_token,
            GRANTFLOW_REFRESH_TOKEN: initial.refresh_token,
            GRANTFLOW_STATE_KEY: 'a key kept as a repository secret',
          };
          const sync = () =>
            runSync({
              settings: settingsSchema.parse({
                ...{ site: sim.url, warehouse, ...(pg ? { schema: pg.schema } : {}), streams: ['programs'] },
                ...{ rate: 1000, snapshot: false, landRaw: false, models: false, logLevel: 'silent' },
                duckdbThreads: suiteDuckdbThreads,
              }),
              logger: silentLogger,
              env,
              tty: false,
            });
          const readStored = async () => {
            const w = await openWarehouse(warehouse, { schema: pg?.schema, logger: silentLogger });
            try {
              return await w.readCredentials(sim.url);
            } finally {
              await w.close();
            }
          };
          // A first run rotates the variables' pair into the warehouse; then the stored access token expires too.
          sim.control.expireAccessTokens();
          expect((await sync()).status).toBe('succeeded');
          const stored = await readStored();
          expect(stored?.refresh_token).toMatch(/^sealed:/);
          sim.control.expireAccessTokens();
          const before = sim.control.tokenCounts();
          const live = sim.credentials;

          const r = await runCliInProcess(
            [
              ...['doctor', '--site', sim.url, '--warehouse', warehouse, ...schemaArgs],
              ...['--snapshot', 'false', '--land-raw', 'false', '--raw-dir', join(runner.path, 'raw')],
            ],
            { env },
          );
          expect(r.code, r.stdout + r.stderr).toBe(0);
          expect(r.stdout).not.toMatch(/^FAIL/m);
          expect(r.stdout).toMatch(/^ok {4}stored pair {2}the pair stored for \S+ is encrypted and opens with/m);
          const credentialsLine = /^(\w+) +credentials {2}(.*)$/m.exec(r.stdout);
          if (pg) {
            expect(credentialsLine?.[1]).toBe('ok');
            expect(credentialsLine?.[2]).not.toMatch(/DuckDB/);
          } else {
            expect(credentialsLine?.[1]).toBe('warn');
            expect(credentialsLine?.[2]).toContain(
              `the warehouse ${warehouse} is a DuckDB file: a runner that does not keep it between runs (one that starts empty, as CI runners do) loses the rotated pair, and the next run fails with invalid_grant; keep the file on a disk kept between runs`,
            );
            expect(credentialsLine?.[2]).toMatch(/, or use a PostgreSQL warehouse .*, or a credentials file$/);
          }
          expect(await readStored()).toEqual(stored);
          expect(sim.control.tokenCounts().rotated ?? 0).toBe(before.rotated ?? 0);
          expect(sim.credentials).toEqual(live);

          // The stored pair still works: the next run refreshes it once.
          expect((await sync()).status).toBe('succeeded');
          expect(sim.control.tokenCounts().rotated).toBe((before.rotated ?? 0) + 1);
        } finally {
          await sim.close();
          await pg?.drop();
          await runner.remove();
        }
      });
    },
  );
});

describe('grantflow doctor, a site where nothing answers', () => {
  it('the client and site lines give the same verdict and advice (exit 2), credentials from a file or variables', async () => {
    // A port that was just free: nothing listens there.
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const closed = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new Promise((done) => server.close(done));
    const args = ['doctor', '--site', closed, '--warehouse', join(dir.path, 'closed.duckdb')];
    const env = {
      GRANTFLOW_CLIENT_ID: 'client',
      GRANTFLOW_CLIENT_SECRET: 'secret-value-0123456789',
      GRANTFLOW_ACCESS_TOKEN: 'access-value-0123456789',
      GRANTFLOW_REFRESH_TOKEN: 'refresh-value-0123456789',
    };
    for (const r of [
      await runCliInProcess([...args, '--credentials', credentials]),
      await runCliInProcess(args, { env }),
    ]) {
      expect(r.code, r.stdout + r.stderr).toBe(2);
      const client = /^FAIL {2}client {7}(.*)$/m.exec(r.stdout)?.[1];
      const site = /^FAIL {2}site {9}(.*)$/m.exec(r.stdout)?.[1];
      expect(client).toMatch(/^nothing answers at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); check --site$/);
      expect(site).toBe(client);
    }
  });
  it('a site that accepts the connection and hangs up: both lines say to try again later (exit 1)', async () => {
    const hangUp = createNetServer((socket) => socket.destroy());
    await new Promise<void>((done) => hangUp.listen(0, '127.0.0.1', done));
    try {
      const url = `http://127.0.0.1:${(hangUp.address() as AddressInfo).port}`;
      const r = await runCliInProcess([
        'doctor',
        '--site',
        url,
        '--credentials',
        credentials,
        '--warehouse',
        join(dir.path, 'hang-up.duckdb'),
      ]);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(/^FAIL {2}client {7}cannot reach \S+ \(.+\); try again later$/m);
      expect(r.stdout).toMatch(/^FAIL {2}site {9}.*; try again later$/m);
    } finally {
      await new Promise((done) => hangUp.close(done));
    }
  });
});
