/**
 * A sync stopped mid-run, by SIGTERM (a cancelled CI job) or by credentials revoked on the site: what was committed
 * stays, the run is recorded (interrupted / failed, with why), the lock is released, one line says what happened and
 * the exit code is documented; the next sync resumes the run and ends equal to an uninterrupted one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import type { RunRecord } from '../../src/warehouse/types.ts';
import {
  modelNames,
  postgresSchema,
  referenceDump,
  siteWithWarehouse,
  syncCliArgs,
  syncOnce,
  type TableDump,
} from '../support/harness.ts';
import {
  assertNoSecretsLeaked,
  checkSnapshotDir,
  cli,
  cliInProcess,
  expectSameWarehouse,
  recordIssuedSecrets,
} from '../support/faults.ts';

const tasks = 'GET /api/applications/{id}/tasks/';
let site: Awaited<ReturnType<typeof siteWithWarehouse>>;
let sim: SimulatorHandle;
let reference: Record<string, TableDump>;

beforeAll(async () => {
  recordIssuedSecrets();
  site = await siteWithWarehouse({ scale: 'tiny', seed: 23 });
  sim = site.sim;
  reference = await referenceDump(sim, site.dir);
});
afterAll(async () => {
  await site?.remove();
});

/** Calls `act` once, as soon as the site has served `n` task requests (polled every 2 ms). */
function when(child: ChildProcess, n: number, act: () => void): void {
  const timer = setInterval(() => {
    if (child.exitCode !== null || child.signalCode !== null) return clearInterval(timer);
    if ((sim.control.counts().byTemplate[tasks] ?? 0) < n) return;
    clearInterval(timer);
    act();
  }, 2);
}

/**
 * A sync into `<site>/<name>/` that `stop` acts on once 5 task requests were served (the site slowed meanwhile).
 * Without models and data tests: these cases stop the extraction and compare the extracted tables.
 */
async function syncStopped(name: string, stop: (child: ChildProcess) => void) {
  const dir = join(site.dir, name);
  const args = [...syncCliArgs(sim.url, dir, { credentials: site.credentials }), '--models', 'false'];
  sim.control.resetCounts();
  sim.control.setLatency({ ms: 10 });
  const stopped = await cli(args, { onSpawn: (child) => when(child, 5, () => stop(child)) });
  sim.control.setLatency({ ms: 0 });
  return { warehouse: join(dir, 'warehouse.duckdb'), args, stopped };
}

async function lastRun(warehouse: string): Promise<RunRecord> {
  const w = await openWarehouse(warehouse, { logger: silentLogger });
  try {
    return (await w.listRuns(1))[0]!;
  } finally {
    await w.close();
  }
}

describe('a sync stopped mid-run', () => {
  it('by SIGTERM: stops taking work, records the run as interrupted, releases the lock, exits 1; the next sync resumes', async () => {
    const { warehouse, args, stopped } = await syncStopped('sigterm', (child) => child.kill('SIGTERM'));
    expect(stopped.signal).toBeNull();
    expect(stopped.code, stopped.stderr).toBe(1);
    expect(stopped.stderr).toMatch(/^grantflow: interrupted by SIGTERM; [^\n]* resumes run \S+\n$/);
    expect(stopped.stdout).toMatch(/: INTERRUPTED in /);
    expect(existsSync(`${warehouse}.lock`)).toBe(false);
    // Closed cleanly: the WAL was folded into the file.
    expect(existsSync(`${warehouse}.wal`)).toBe(false);
    const run = await lastRun(warehouse);
    expect(run.status).toBe('interrupted');

    const next = await cliInProcess(args);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toMatch(/\(resumed\)/);
    await expectSameWarehouse(warehouse, reference);
  });

  it('by SIGTERM while the site asks for a 5-minute pause (Retry-After): gives up the wait at once; the next sync resumes', async () => {
    let stopped: Awaited<ReturnType<typeof syncStopped>>;
    try {
      stopped = await syncStopped('paused', (child) => {
        // The site now lets one request a second through and tells the rest to come back in 300 s; the signal
        // comes once the sync has been told so at least once.
        sim.control.setRetryAfter(300);
        sim.control.setRate(1);
        const timer = setInterval(() => {
          if (child.exitCode !== null || (sim.control.counts().byStatus['429'] ?? 0) > 0) {
            clearInterval(timer);
            child.kill('SIGTERM');
          }
        }, 2);
      });
    } finally {
      sim.control.setRate(0);
      sim.control.setRetryAfter(false);
    }
    const { warehouse, args } = stopped;
    expect(stopped.stopped.code, stopped.stopped.stderr).toBe(1);
    // After the site's warnings (the 429s, logged), the one line on the stop.
    expect(stopped.stopped.stderr).toMatch(/rate limited \(429\)/);
    expect(stopped.stopped.stderr).toMatch(/\ngrantflow: interrupted by SIGTERM; [^\n]* resumes run \S+\n$/);
    expect((await lastRun(warehouse)).status).toBe('interrupted');

    const next = await cliInProcess(args);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toMatch(/\(resumed\)/);
    await expectSameWarehouse(warehouse, reference);
  });

  it('by credentials revoked on the site: records the run as failed with why, reports committed streams, exits 2', async () => {
    const { warehouse, args, stopped } = await syncStopped('revoked', () => sim.control.revokeAllCredentials());
    expect(stopped.code, stopped.stderr).toBe(2);
    expect(stopped.stderr).toMatch(/^grantflow: [^\n]*invalid_grant[^\n]*next sync resumes run \S+\n$/);
    // The streams committed before are reported.
    expect(stopped.stdout).toMatch(/: FAILED in /);
    expect(stopped.stdout).toMatch(/^ {2}applications +ok /m);
    expect(existsSync(`${warehouse}.lock`)).toBe(false);
    const run = await lastRun(warehouse);
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run.summary)).toMatch(/invalid_grant/);
    assertNoSecretsLeaked([JSON.stringify(run.summary)]);

    // An administrator issues new credentials; the next sync resumes the run.
    await import('node:fs/promises').then((fs) =>
      fs.writeFile(site.credentials, JSON.stringify(sim.control.issueCredentials()), { mode: 0o600 }),
    );
    const next = await cliInProcess(args);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toMatch(/\(resumed\)/);
    await expectSameWarehouse(warehouse, reference);
  });

  it('by an error that ends the run (a table refusing rows): records the run as failed, not interrupted', async () => {
    const pgSchema = await postgresSchema();
    try {
      const dir = join(site.dir, 'refused');
      const args = syncCliArgs(sim.url, dir, {
        credentials: site.credentials,
        warehouse: ['--warehouse', pgSchema.url, '--schema', pgSchema.schema],
      });
      // The warehouse the failing run starts from, synced in process: that run is the case.
      const synced = await syncOnce(sim, {
        credentials: site.credentials,
        warehouse: pgSchema.url,
        schema: pgSchema.schema,
        models: false,
      });
      expect(synced.status).toBe('succeeded');
      const client = new pg.Client({ connectionString: pgSchema.url });
      await client.connect();
      try {
        await client.query(`ALTER TABLE ${pgSchema.schema}.programs ADD CONSTRAINT refuse CHECK (false) NOT VALID`);
      } finally {
        await client.end();
      }
      const failed = await cliInProcess(args);
      expect(failed.code, failed.stderr).toBe(1);
      const w = await openWarehouse(pgSchema.url, { schema: pgSchema.schema, logger: silentLogger });
      try {
        const run = (await w.listRuns(1))[0]!;
        expect(run.status).toBe('failed');
        expect(JSON.stringify(run.summary)).toMatch(/refuse/);
      } finally {
        await w.close();
      }
    } finally {
      await pgSchema.drop();
    }
  });
});

/** The models `warehouse` holds a table of. */
async function builtModels(warehouse: string): Promise<string[]> {
  const w = await openWarehouse(warehouse, { logger: silentLogger });
  try {
    const names = await w.modelTables();
    return modelNames.filter((m) => names.has(m));
  } finally {
    await w.close();
  }
}

/** Each `<table>/` entry of a snapshot directory (folders and temporaries), and the manifest's text. */
function snapshotState(dir: string): { entries: string[]; manifest: string | null } {
  const entries: string[] = [];
  for (const table of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
    entries.push(table.name);
    if (table.isDirectory()) for (const e of readdirSync(join(dir, table.name))) entries.push(`${table.name}/${e}`);
  }
  const manifestPath = join(dir, '_manifest.json');
  return { entries: entries.sort(), manifest: existsSync(manifestPath) ? readFileSync(manifestPath, 'utf8') : null };
}

describe('a sync signalled once its extraction is over', () => {
  const cases = [
    { at: 'sync extraction finished', signal: 'SIGTERM', earlier: false },
    { at: 'model built ', signal: 'SIGINT', earlier: false },
    { at: 'snapshot files staged', signal: 'SIGTERM', earlier: true },
    { at: 'snapshot folder placed ', signal: 'SIGINT', earlier: true },
  ] as const;

  it.each(cases)(
    'by $signal at $at: starts no model or snapshot after it, keeps the last good snapshot, records the run interrupted',
    async ({ at, signal, earlier }) => {
      const dir = join(site.dir, `after-load-${at.trim().replace(/ /g, '-')}`);
      const args = syncCliArgs(sim.url, dir, { credentials: site.credentials, snapshot: true });
      const warehouse = join(dir, 'warehouse.duckdb');
      const snapshots = join(dir, 'snapshots');
      if (earlier) {
        // A last good snapshot, from a sync in process: the signalled run below is the case.
        const good = await syncOnce(sim, { credentials: site.credentials, warehouse, snapshot: true, snapshots });
        expect(good.status).toBe('succeeded');
      }
      const before = snapshotState(snapshots);

      const stopped = await cli(args, {
        env: { GRANTFLOW_TEST_PAUSE_AT: at },
        onSpawn: (child) => {
          child.stderr?.on('data', (d: Buffer) => {
            if (d.toString().includes('grantflow-test: paused at')) child.kill(signal);
          });
        },
      });
      expect(stopped.signal).toBeNull();
      expect(stopped.code, stopped.stderr).toBe(1);
      expect(stopped.stderr).toMatch(
        new RegExp(`\\ngrantflow: interrupted by ${signal}; [^\\n]* resumes run \\S+\\n$`),
      );
      expect(stopped.stdout).toMatch(/: INTERRUPTED in /);
      if (at !== 'sync extraction finished') expect(stopped.stdout).toMatch(/the last good snapshot stays current/);
      expect((await lastRun(warehouse)).status).toBe('interrupted');
      expect(existsSync(`${warehouse}.lock`)).toBe(false);
      // Nothing started after the signal: a model paused on is the last one built; a snapshot is undone whole.
      const paused = /paused at model built (\w+)/.exec(stopped.stderr)?.[1];
      const built = await builtModels(warehouse);
      if (at === 'sync extraction finished') expect(built).toEqual([]);
      if (paused) expect(built).toEqual([paused]);
      if (earlier) expect(built.sort()).toEqual([...modelNames].sort());
      expect(snapshotState(snapshots)).toEqual(before);

      const next = await cliInProcess(args);
      expect(next.code, next.stderr).toBe(0);
      expect(next.stdout).toMatch(/\(resumed\)/);
      expect((await lastRun(warehouse)).status).toBe('succeeded');
      expect((await builtModels(warehouse)).sort()).toEqual([...modelNames].sort());
      const snaps = await checkSnapshotDir(snapshots);
      expect(snaps.manifestTables).toBe(Number(/snapshots: (\d+) tables written/.exec(next.stdout)?.[1]));
      expect(snapshotState(snapshots).manifest).not.toEqual(before.manifest);
    },
  );
});
