/**
 * A sync into a shared Postgres database while an analyst holds `LOCK TABLE applications IN ACCESS EXCLUSIVE MODE`
 * in a transaction left open: the run must not hang. It logs who holds the table, stops after its bound with one
 * clear message and exit 1, commits nothing of that load, and the next sync resumes the run and ends as a lone sync.
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { settingsSchema } from '../../src/config/settings.ts';
import { tables } from '../../src/normalize/index.ts';
import { runSync, SyncStoppedError } from '../../src/pipeline/sync.ts';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { expectSameWarehouse } from './faults/support.ts';
import {
  capturingLogger,
  dropPostgresSchema,
  postgresUrl,
  referenceDump,
  startSite,
  tempDir,
  writeCredentials,
  type TableDump,
} from './harness.ts';

const schema = `${process.env.GRANTFLOW_TEST_PREFIX ?? 'gf_'}sync_load_locks_${process.pid}`;
let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
let reference: Record<string, TableDump>;
const analyst = new pg.Client({ connectionString: postgresUrl });

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 23 });
  work = await tempDir('grantflow-load-locks-');
  reference = await referenceDump(sim, work.path);
  await analyst.connect();
});

afterAll(async () => {
  await analyst.end();
  await dropPostgresSchema(schema);
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
  });
  // The tables of an earlier sync, for the analyst to lock.
  const earlier = await openWarehouse(postgresUrl, { schema });
  await earlier.migrate(tables);
  await earlier.close();

  const { logger, lines } = capturingLogger();
  const pid = (await analyst.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
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
        `"${schema}"."applications", held by backend pid ${pid} \\(role postgres.*must end first.*` +
        `the next sync resumes run ${stopped.result.runId}$`,
    ),
  );
  expect(stopped.result.status).toBe('failed');
  const waits = lines.filter((l) => l.level === 40 && String(l.msg).startsWith('load of stream applications waits'));
  expect(waits[0]?.holders).toContain(`backend pid ${pid}`);
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
