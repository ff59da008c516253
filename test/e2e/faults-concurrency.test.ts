/**
 * Two syncs of one warehouse at once (a DuckDB file; a Postgres schema): the second refuses with one clear line
 * and exit code 1, and the first, which holds the warehouse, completes unharmed (equal to a lone sync).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import {
  referenceDump,
  postgresSchema,
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
  expectSameWarehouse,
  recordIssuedSecrets,
} from '../support/faults.ts';

let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
let reference: Record<string, TableDump>;
const schemas: { drop: () => Promise<void> }[] = [];

beforeAll(async () => {
  recordIssuedSecrets();
  sim = await startSite({ scale: 'tiny', seed: 13 });
  work = await tempDir('grantflow-faults-concurrency-');
  reference = await referenceDump(sim, work.path);
});

afterAll(async () => {
  await sim?.close();
  for (const s of schemas) await s.drop();
  await work?.remove();
});

/** Starts sync A, waits until it is extracting (so it holds the warehouse), runs sync B, then lets A finish. */
async function twoSyncs(dir: string, warehouse: string[]): Promise<void> {
  await mkdir(dir);
  // Separate credential files of one set would fight over the rotating refresh token; 2 h tokens never rotate here.
  const credsA = await writeCredentials(sim, join(dir, 'creds-a.json'));
  const credsB = await writeCredentials(sim, join(dir, 'creds-b.json'));
  const args = (creds: string): string[] => syncCliArgs(sim.url, dir, { credentials: creds, warehouse });
  // A holds each load transaction open 250 ms (test hook), so it runs for seconds whatever the machine's speed.
  let loading!: () => void;
  const aIsLoading = new Promise<void>((resolve) => (loading = resolve));
  const first = cli(args(credsA), {
    env: { GRANTFLOW_TEST_DELAY_COMMIT_MS: '250' },
    onSpawn: (child) => child.stderr?.on('data', (d: Buffer) => d.includes('load transaction open') && loading()),
  });
  // A has the warehouse locked once it is loading.
  await aIsLoading;
  const second = await cli(args(credsB));
  const a = await first;

  expect(second.code, second.stderr).toBe(1);
  const lines = second.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^grantflow: warehouse .* is in use by another grantflow run .*wait for it to finish/);
  expect(second.stderr).not.toMatch(/^\s+at /m);

  expect(a.code, a.stderr).toBe(0);
  checkCredentialsFile(credsA);
  checkCredentialsFile(credsB);
}

describe('two concurrent syncs of one warehouse', () => {
  it('DuckDB file: the second refuses (exit 1), the first completes and equals a lone sync', async () => {
    const dir = join(work.path, 'duckdb');
    const warehouse = join(dir, 'warehouse.duckdb');
    await twoSyncs(dir, ['--warehouse', warehouse]);
    await expectSameWarehouse(warehouse, reference);
  });

  it('Postgres schema: the second refuses (exit 1), the first completes and equals a lone sync', async () => {
    const pg = await postgresSchema();
    schemas.push(pg);
    await twoSyncs(join(work.path, 'postgres'), ['--warehouse', pg.url, '--schema', pg.schema]);
    await expectSameWarehouse(pg.url, reference, { schema: pg.schema });
  });

  it('no secret appeared in any output', () => {
    assertNoSecretsLeaked();
  });
});
