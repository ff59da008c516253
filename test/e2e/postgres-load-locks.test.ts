/**
 * A sync into a shared Postgres database while an analyst holds `LOCK TABLE applications IN ACCESS EXCLUSIVE MODE`
 * in a transaction left open: the run must not hang. It logs who holds the table, stops after its bound with one
 * clear message and exit 1, commits nothing of that load, and the next sync resumes the run and ends as a lone sync.
 * A signal (Ctrl-C, a cancelled CI job) during that wait stops it at its next attempt, not after the bound. A lock
 * on a bookkeeping table (the run's record) is waited for the same way. Statistics are not waited for: a table whose
 * ANALYZE meets a lock is skipped with a warning and the run succeeds. After a signal, the run's final record still
 * waits a few seconds for a lock on the run table, so a brief one does not leave the run `running`, and the command
 * still ends, saying so, when the lock outlasts that.
 */
import { join } from 'node:path';

import { setTimeout as sleep } from 'node:timers/promises';

import type { ChildProcess } from 'node:child_process';

import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { settingsSchema } from '../../src/config/settings.ts';

import { runSync, SyncStoppedError } from '../../src/pipeline/sync.ts';

import { GrantflowError } from '../../src/util/errors.ts';

import type { SimulatorHandle } from '../../src/simulator/index.ts';

import { openWarehouse } from '../../src/warehouse/index.ts';

import { cli, expectSameWarehouse, waitFor } from '../support/faults.ts';

import {
  capturingLogger,
  dropPostgresSchema,
  postgresUrl,
  referenceDump,
  startSite,
  syncCliArgs,
  tempDir,
  writeCredentials,
  type TableDump,
  analystSession,
  clusterName,
} from '../support/harness.ts';
import { tables } from '../../src/streams/registry.ts';

const schema = clusterName('sync_load_locks');
const signalled = `${schema}_signal`;
const runsLocked = `${schema}_runs`;
const statsLocked = `${schema}_stats`;
const finalLocked = `${schema}_final`;
const finalHeld = `${schema}_final_held`;
let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
let reference: Record<string, TableDump>;
let analyst: pg.Client;
let analystPid = 0;

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 23 });
  work = await tempDir('grantflow-load-locks-');
  reference = await referenceDump(sim, work.path);
  ({ client: analyst, pid: analystPid } = await analystSession());
});

afterAll(async () => {
  await analyst?.end();
  await dropPostgresSchema(schema);
  await dropPostgresSchema(signalled);
  await dropPostgresSchema(runsLocked);
  await dropPostgresSchema(statsLocked);
  await dropPostgresSchema(finalLocked);
  await dropPostgresSchema(finalHeld);
  await sim?.close();
  await work?.remove();
});

it('a loaded table locked by an analyst: the sync logs the holder, fails after its bound naming it, and the next sync resumes', async () => {
  const credentials = await writeCredentials(sim, join(work.path, 'creds.json'));
  const settings = settingsSchema.parse({
    site: sim.url,
    credentials,
    warehouse: postgresUrl,
    schema,
    rate: 1000,
    snapshot: false,
    landRaw: false,
    // The page-size probe commits its finding to the applications state: no state at all must mean no load.
    detectPageSize: false,
  });
  // The tables of an earlier sync, for the analyst to lock.
  const earlier = await openWarehouse(postgresUrl, { schema });
  await earlier.migrate(tables);
  await earlier.close();

  const { logger, lines } = capturingLogger();
  await analyst.query('BEGIN');
  let failed: unknown;
  try {
    await analyst.query(`LOCK TABLE ${schema}.applications IN ACCESS EXCLUSIVE MODE`);
    failed = await runSync({
      settings,
      logger,
      env: {},
      tty: false,
      loadLockWait: { attemptMs: 100, totalMs: 500 },
    }).then(
      () => null,
      (e: unknown) => e,
    );
  } finally {
    await analyst.query('ROLLBACK');
  }
  expect(failed).toBeInstanceOf(SyncStoppedError);
  const stopped = failed as SyncStoppedError;
  expect(stopped.exitCode).toBe(1);
  expect(stopped.message).toMatch(
    new RegExp(
      `^load of stream applications rolled back, nothing of it committed: waited \\d+ s for a lock on ` +
        `"${schema}"."applications", held by backend pid ${analystPid} \\(role postgres.*must end first.*` +
        `the next sync resumes run ${stopped.result.runId}$`,
    ),
  );
  expect(stopped.result.status).toBe('failed');
  const waits = lines.filter((l) => l.level === 40 && String(l.msg).startsWith('load of stream applications waits'));
  expect(waits[0]?.holders).toContain(`backend pid ${analystPid}`);
  const check = await openWarehouse(postgresUrl, { schema });
  try {
    expect(await check.readState('applications')).toBeNull();
    expect(await check.query('SELECT count(*) AS n FROM applications')).toEqual([{ n: 0 }]);
  } finally {
    await check.close();
  }

  const rerun = await runSync({ settings, logger, env: {}, tty: false });
  expect(rerun.resumed).toBe(true);
  expect(rerun.runId).toBe(stopped.result.runId);
  expect(rerun.status).toBe('succeeded');
  await expectSameWarehouse(postgresUrl, reference, { schema });
}, 120_000);

it('SIGINT while a load waits for an analyst lock: rolled back within an attempt, the run interrupted, the next sync resumes', async () => {
  const earlier = await openWarehouse(postgresUrl, { schema: signalled });
  await earlier.migrate(tables);
  await earlier.close();
  const args = [
    ...syncCliArgs(sim.url, work.path, {
      credentials: await writeCredentials(sim, join(work.path, 'signal-creds.json')),
      warehouse: ['--warehouse', postgresUrl, '--schema', signalled],
    }),
    // The page-size probe commits its finding to the applications state: no state at all must mean no load.
    '--detect-page-size',
    'false',
  ];

  let child: ChildProcess | undefined;
  let stderr = '';
  await analyst.query('BEGIN');
  await analyst.query(`LOCK TABLE ${signalled}.applications IN ACCESS EXCLUSIVE MODE`);
  const run = cli(args, {
    onSpawn: (c) => {
      child = c;
      c.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    },
  });
  try {
    // The default wait (2 s attempts, 5 min); the signal comes once the load has logged that it waits.
    await waitFor(() => stderr.includes('load of stream applications waits for a lock'), 60_000);
    child?.kill('SIGINT');
    // The lock stays held until the sync exits, or for 30 s: a sync still waiting then would commit the load.
    await Promise.race([run, sleep(30_000)]);
  } finally {
    await analyst.query('ROLLBACK');
  }
  const stopped = await run;
  expect(stopped.code, stopped.stderr).toBe(1);
  expect(stopped.stderr).toMatch(/\ngrantflow: interrupted by SIGINT; [^\n]* resumes run \S+\n$/);
  expect(stopped.stdout).toMatch(/: INTERRUPTED in /);
  const check = await openWarehouse(postgresUrl, { schema: signalled });
  try {
    expect(await check.readState('applications')).toBeNull();
    expect(await check.query('SELECT count(*) AS n FROM applications')).toEqual([{ n: 0 }]);
    expect((await check.listRuns(1))[0]?.status).toBe('interrupted');
  } finally {
    await check.close();
  }

  const next = await cli(args);
  expect(next.code, next.stderr).toBe(0);
  expect(next.stdout).toMatch(/\(resumed\)/);
  await expectSameWarehouse(postgresUrl, reference, { schema: signalled });
}, 180_000);

it('the run table locked by an analyst: saving the run record gives up after the bound naming the holder', async () => {
  const credentials = await writeCredentials(sim, join(work.path, 'runs-creds.json'));
  const settings = settingsSchema.parse({
    site: sim.url,
    credentials,
    warehouse: postgresUrl,
    schema: runsLocked,
    rate: 1000,
    snapshot: false,
    landRaw: false,
    // The page-size probe commits its finding to the applications state: no state at all must mean no load.
    detectPageSize: false,
  });
  const earlier = await openWarehouse(postgresUrl, { schema: runsLocked });
  await earlier.migrate(tables);
  await earlier.close();

  const { logger, lines } = capturingLogger();
  await analyst.query('BEGIN');
  // SHARE mode (a consistent report across tables) lets the run be read but not written.
  await analyst.query(`LOCK TABLE ${runsLocked}._grantflow_runs IN SHARE MODE`);
  const sync = runSync({ settings, logger, env: {}, tty: false, loadLockWait: { attemptMs: 100, totalMs: 500 } }).then(
    () => null,
    (e: unknown) => e,
  );
  try {
    // The lock stays held until the sync ends, or for 30 s: a sync still waiting then would save its run.
    await Promise.race([sync, sleep(30_000)]);
  } finally {
    await analyst.query('ROLLBACK');
  }
  const failed = await sync;
  expect(failed).toBeInstanceOf(GrantflowError);
  expect((failed as GrantflowError).exitCode).toBe(1);
  expect((failed as GrantflowError).message).toMatch(
    new RegExp(
      `^saving the record of run \\S+: waited \\d+ s for a lock on "${runsLocked}"."_grantflow_runs", ` +
        `held by backend pid ${analystPid} \\(role postgres.*\\), and gave up: the session holding it .* must end first`,
    ),
  );
  const waits = lines.filter((l) => l.level === 40 && String(l.msg).startsWith('saving the record of run'));
  expect(waits[0]?.holders).toContain(`backend pid ${analystPid}`);
  const check = await openWarehouse(postgresUrl, { schema: runsLocked });
  try {
    expect(await check.listRuns(5)).toEqual([]);
  } finally {
    await check.close();
  }

  const rerun = await runSync({ settings, logger, env: {}, tty: false });
  expect(rerun.status).toBe('succeeded');
}, 120_000);

it('a loaded table whose ANALYZE meets a lock (a manual VACUUM, CREATE INDEX CONCURRENTLY): skipped with a warning naming the holder, the run succeeds', async () => {
  const credentials = await writeCredentials(sim, join(work.path, 'stats-creds.json'));
  const settings = settingsSchema.parse({
    site: sim.url,
    credentials,
    warehouse: postgresUrl,
    schema: statsLocked,
    rate: 1000,
    snapshot: false,
    landRaw: false,
    // The page-size probe commits its finding to the applications state: no state at all must mean no load.
    detectPageSize: false,
  });
  const earlier = await openWarehouse(postgresUrl, { schema: statsLocked });
  await earlier.migrate(tables);
  await earlier.close();

  const { logger, lines } = capturingLogger();
  await analyst.query('BEGIN');
  // SHARE UPDATE EXCLUSIVE lets loads write and models read, and blocks ANALYZE only.
  await analyst.query(`LOCK TABLE ${statsLocked}.applications IN SHARE UPDATE EXCLUSIVE MODE`);
  const sync = runSync({ settings, logger, env: {}, tty: false, loadLockWait: { attemptMs: 100, totalMs: 500 } }).then(
    (r) => r,
    (e: unknown) => e,
  );
  try {
    // The lock stays held until the sync ends, or for 30 s: a sync still waiting then would analyze the table.
    await Promise.race([sync, sleep(30_000)]);
  } finally {
    await analyst.query('ROLLBACK');
  }
  const result = await sync;
  expect(result).toMatchObject({ status: 'succeeded' });
  const table = `"${statsLocked}"."applications"`;
  const skipped = lines.filter((l) => l.level === 40 && String(l.msg).startsWith(`statistics of ${table}`));
  expect(skipped).toHaveLength(1);
  expect(skipped[0]?.msg).toMatch(/not refreshed: its lock is held by backend pid \d+ .*; the next run analyzes it$/);
  expect(skipped[0]?.holders).toContain(`backend pid ${analystPid}`);
}, 120_000);

/**
 * A CLI sync into `target` paused once its extraction is done; there the analyst locks the run table (SHARE mode:
 * readable, not writable) and the sync gets SIGINT. `release` says when the analyst lets go (given the sync's
 * stderr so far and whether it has exited); the lock is held at most until the sync exits, or for 60 s.
 */
async function signalledWithRunsLocked(
  target: string,
  release: (stderr: string, exited: boolean) => boolean,
): Promise<{ args: string[]; stopped: Awaited<ReturnType<typeof cli>> }> {
  const args = syncCliArgs(sim.url, work.path, {
    credentials: await writeCredentials(sim, join(work.path, `${target}-creds.json`)),
    warehouse: ['--warehouse', postgresUrl, '--schema', target],
  });
  let child: ChildProcess | undefined;
  let stderr = '';
  let exited = false;
  const run = cli(args, {
    env: { GRANTFLOW_TEST_PAUSE_AT: 'sync extraction finished', GRANTFLOW_TEST_PAUSE_MS: '600000' },
    onSpawn: (c) => {
      child = c;
      c.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    },
  }).finally(() => (exited = true));
  await waitFor(() => stderr.includes('grantflow-test: paused at') || exited, 60_000);
  await analyst.query('BEGIN');
  try {
    await analyst.query(`LOCK TABLE ${target}._grantflow_runs IN SHARE MODE`);
    child?.kill('SIGINT');
    await Promise.race([waitFor(() => release(stderr, exited), 60_000), run]).catch(() => undefined);
  } finally {
    await analyst.query('ROLLBACK');
  }
  return { args, stopped: await run };
}

async function lastRunStatus(target: string): Promise<string | undefined> {
  const check = await openWarehouse(postgresUrl, { schema: target });
  try {
    return (await check.listRuns(1))[0]?.status;
  } finally {
    await check.close();
  }
}

it('SIGINT while an analyst briefly locks the run table: the final record waits for it, and the run is recorded interrupted', async () => {
  // The analyst lets go once the sync says it is waiting to record the run (or once it has given up and exited).
  const { stopped } = await signalledWithRunsLocked(
    finalLocked,
    (stderr, exited) => exited || /saving the record of run \S+ waits for a lock .*stopping: gives up in/.test(stderr),
  );
  expect(stopped.code, stopped.stderr).toBe(1);
  expect(stopped.stderr).toMatch(/\ngrantflow: interrupted by SIGINT; [^\n]* resumes run \S+\n$/);
  expect(stopped.stdout).toMatch(/: INTERRUPTED in /);
  expect(await lastRunStatus(finalLocked)).toBe('interrupted');
}, 180_000);

it('SIGINT while an analyst holds the run table locked: the sync still ends, says the run could not be recorded, and the next sync resumes it', async () => {
  const { args, stopped } = await signalledWithRunsLocked(finalHeld, (_stderr, exited) => exited);
  expect(stopped.code, stopped.stderr).toBe(1);
  const runId = /resumes run (\S+);/.exec(stopped.stderr)?.[1] ?? '';
  expect(stopped.stderr).toMatch(
    new RegExp(
      `\ngrantflow: interrupted by SIGINT; the streams committed before are kept and the next sync resumes run ${runId}; ` +
        `the run could not be recorded as interrupted, so its record says running until then \\(saving the record of run ${runId}: ` +
        `waited \\d+ s for a lock on "${finalHeld}"."_grantflow_runs", held by backend pid ${analystPid} \\(role postgres.*\\), ` +
        `and gave up \\(stopping\\): the session holding it .* must end first .*\\)\n$`,
    ),
  );
  expect(stopped.stdout).toMatch(/: INTERRUPTED in /);
  expect(await lastRunStatus(finalHeld)).toBe('running');

  const next = await cli(args);
  expect(next.code, next.stderr).toBe(0);
  expect(next.stdout).toMatch(/\(resumed\)/);
  expect(next.stdout).toContain(runId);
  await expectSameWarehouse(postgresUrl, reference, { schema: finalHeld });
}, 180_000);
