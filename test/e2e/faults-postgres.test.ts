/**
 * The Postgres connection killed mid-load (`pg_terminate_backend` on the sync's backend while a load transaction
 * is open): the transaction rolls back, the stream's state in `_grantflow_streams` does not advance, the run
 * reports the failure clearly (exit 1), and the next run completes and equals a lone sync.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import {
  referenceDump,
  postgresSchema,
  postgresUrl,
  startSite,
  tempDir,
  writeCredentials,
  type TableDump,
  syncCliArgs,
} from '../support/harness.ts';
import {
  assertNoSecretsLeaked,
  checkCredentialsFile,
  cli,
  cliInProcess,
  expectSameWarehouse,
  recordIssuedSecrets,
} from '../support/faults.ts';

let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
let reference: Record<string, TableDump>;
let schema: { schema: string; url: string; drop: () => Promise<void> };
let admin: pg.Client;

beforeAll(async () => {
  recordIssuedSecrets();
  sim = await startSite({ scale: 'tiny', seed: 17 });
  work = await tempDir('grantflow-faults-postgres-');
  reference = await referenceDump(sim, work.path);
  schema = await postgresSchema();
  admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await schema?.drop();
  await sim?.close();
  await work?.remove();
});

interface Terminated {
  readonly pid: number;
  readonly query: string;
  readonly stream: string;
  readonly streamsBefore: readonly { stream: string; state: string | null }[];
}

/**
 * The sync's backend that sits in an open transaction on our schema (other suites use other schemas): known by the
 * locks it holds on our tables, not by the text of its last statement, which may be a setting that names no table.
 */
async function openLoadBackend(): Promise<{ pid: number; query: string }[]> {
  const res = await admin.query<{ pid: number; query: string }>(
    `SELECT a.pid, a.query FROM pg_stat_activity a
      WHERE a.application_name = 'grantflow' AND a.state = 'idle in transaction'
        AND EXISTS (SELECT 1 FROM pg_locks l
                      JOIN pg_class c ON c.oid = l.relation
                      JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE l.pid = a.pid AND n.nspname = $1)`,
    [schema.schema],
  );
  return res.rows;
}

async function streamsRows(): Promise<{ stream: string; state: string | null }[]> {
  const res = await admin
    .query<{ stream: string; state: string | null }>(
      `SELECT stream, state FROM ${schema.schema}._grantflow_streams ORDER BY stream`,
    )
    .catch(() => ({ rows: [] }));
  return res.rows;
}

describe('Postgres connection killed during a load transaction', () => {
  it('rolls back, keeps the stream state, reports the failure; the next run equals a lone sync', async () => {
    const dir = join(work.path, 'run');
    await mkdir(dir);
    const creds = await writeCredentials(sim, join(dir, 'creds.json'));
    const args = syncCliArgs(sim.url, dir, {
      credentials: creds,
      warehouse: ['--warehouse', schema.url, '--schema', schema.schema],
    });

    // The test hook holds each load transaction open 400 ms; the third one is the victim.
    let terminated: Promise<Terminated> | null = null;
    const failedRun = await cli(args, {
      env: { GRANTFLOW_TEST_DELAY_COMMIT_MS: '400' },
      onSpawn: (child) => {
        let seen = 0;
        child.stderr?.on('data', (d: Buffer) => {
          for (const line of d.toString().split('\n')) {
            const open = /grantflow-test: load transaction open \(stream (\S+)\)/.exec(line);
            if (!open || ++seen !== 3) continue;
            terminated = (async () => {
              const streamsBefore = await streamsRows();
              const backends = await openLoadBackend();
              expect(backends).toHaveLength(1);
              const victim = backends[0]!;
              await admin.query('SELECT pg_terminate_backend($1)', [victim.pid]);
              return { ...victim, stream: open[1] ?? '', streamsBefore };
            })();
          }
        });
      },
    });
    expect(terminated, 'a load transaction was open').not.toBeNull();
    const victim = await terminated!;

    // The run stops with one readable line and exit 1 (no stack): the warehouse went away under it.
    expect(failedRun.code, failedRun.stderr).toBe(1);
    expect(failedRun.stderr).not.toMatch(/^\s+at /m);
    const plain = failedRun.stderr.split('\n').filter((l) => l.startsWith('grantflow: '));
    expect(plain).toHaveLength(1);
    expect(plain[0]).toMatch(/lost the connection to the Postgres warehouse .*rolled back.*rerun/);

    // Rolled back: the victim stream's state is what it was before its transaction (nothing, on a fresh schema).
    const stream = victim.stream;
    const after = await streamsRows();
    const before = victim.streamsBefore.find((r) => r.stream === stream) ?? null;
    expect(after.find((r) => r.stream === stream) ?? null).toEqual(before);

    const rerun = await cliInProcess(args);
    expect(rerun.code, rerun.stderr).toBe(0);
    await expectSameWarehouse(schema.url, reference, { schema: schema.schema });
    checkCredentialsFile(creds);
  });

  it('no secret appeared in any output', () => {
    assertNoSecretsLeaked();
  });
});
