/**
 * A misbehaving site: 10 % injected faults of every kind (5xx HTML pages, truncated JSON, reset connections,
 * latency) with 2-second tokens, and a 429 storm (the site allows 1 request/s, the client is told 5/s). Each sync
 * completes and its warehouse equals a fault-free sync of the same data.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import {
  referenceDump,
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

const seed = 5;
let work: { path: string; remove: () => Promise<void> };
const sims: SimulatorHandle[] = [];

async function site(options: Parameters<typeof startSite>[0] = {}): Promise<SimulatorHandle> {
  const sim = await startSite({ scale: 'tiny', seed, ...options });
  sims.push(sim);
  return sim;
}

/** A fault-free in-process sync of the same data (optionally a stream subset). */
function reference(name: string, streams?: string[]): Promise<Record<string, TableDump>> {
  return site().then((sim) => referenceDump(sim, work.path, name, streams ? { streams } : {}));
}

beforeAll(async () => {
  recordIssuedSecrets();
  work = await tempDir('grantflow-faults-site-');
});

afterAll(async () => {
  for (const sim of sims) await sim.close();
  await work?.remove();
});

describe('a misbehaving site', () => {
  it('10 % faults of every kind and 2-second tokens: the sync completes and equals a fault-free one', async () => {
    const expected = await reference('reference-all');
    const sim = await site({
      tokenTtlSeconds: 2,
      faults: { rate: 0.1, latencyMs: 300, jitterMs: 200, seed: 99 },
      latency: { ms: 5 },
    });
    const dir = join(work.path, 'faults');
    await mkdir(dir);
    await writeCredentials(sim, join(dir, 'creds.json'));

    const result = await cli(syncCliArgs(sim.url, dir));
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    await expectSameWarehouse(join(dir, 'warehouse.duckdb'), expected);
    checkCredentialsFile(join(dir, 'creds.json'));

    const injected = sim.control.faultsInjected();
    for (const kind of ['5xx', 'truncate', 'reset', 'latency'] as const) {
      expect(injected[kind] ?? 0, `faults of kind ${kind} injected`).toBeGreaterThan(0);
    }
    expect(sim.control.counts().byTemplate['POST /api/o/token/'] ?? 0).toBeGreaterThan(0);
    // The summary reports the retries it needed.
    expect(result.stdout).toMatch(/retries [1-9]/);
  });

  it('a 429 storm (site 1/s, client 5/s) on a few streams: the sync completes and equals a fault-free one', async () => {
    const streams = ['programs', 'funds', 'budgets', 'custom_fields', 'reports'];
    const expected = await reference('reference-subset', streams);
    const sim = await site({ rate: 1 });
    const dir = join(work.path, 'storm');
    await mkdir(dir);
    await writeCredentials(sim, join(dir, 'creds.json'));

    const result = await cli([...syncCliArgs(sim.url, dir, { rate: 5 }), '--streams', streams.join(',')]);
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    await expectSameWarehouse(join(dir, 'warehouse.duckdb'), expected);
    checkCredentialsFile(join(dir, 'creds.json'));
    expect(sim.control.counts().byStatus['429'] ?? 0, 'the site answered 429s').toBeGreaterThan(0);
  });

  it('no secret appeared in any output', () => {
    assertNoSecretsLeaked();
  });
});
