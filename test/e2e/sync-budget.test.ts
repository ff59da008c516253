/**
 * A sync with a time budget (--max-duration): past it no new unit of work starts, what was fetched is committed, the
 * run is recorded `paused` and exits 0; consecutive runs complete a first sync with nothing fetched twice and a
 * warehouse equal to one uninterrupted sync, on DuckDB and on Postgres.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReason } from '../../src/pipeline/run-reason.ts';
import type { SyncResult } from '../../src/pipeline/sync.ts';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import {
  dumpWarehouse,
  postgresSchema,
  runCli,
  siteWithWarehouse,
  syncCliArgs,
  syncOnce,
  type TableDump,
} from '../support/harness.ts';
import { expectSameWarehouse } from '../support/faults.ts';

/**
 * What every run asks once of its own: a token, and the one-record page of programs that checks the site before
 * anything is written (preflight). Every other request is data a run reads.
 */
const perRunCalls = /^POST \/api\/o\/|^GET \/api\/programs\/\?per_page=1$/;

let site: Awaited<ReturnType<typeof siteWithWarehouse>>;
let sim: SimulatorHandle;
let reference: Record<string, TableDump>;
/** Requests (method, path and query) of one uninterrupted sync. */
let referenceRequests: Record<string, number>;

beforeAll(async () => {
  site = await siteWithWarehouse({ scale: 'tiny', seed: 41 });
  sim = site.sim;
  sim.control.resetCounts();
  const warehouse = join(site.dir, 'reference.duckdb');
  const result = await syncOnce(sim, { credentials: site.credentials, warehouse });
  expect(result.status).toBe('succeeded');
  referenceRequests = sim.control.counts().byRequest;
  reference = await dumpWarehouse(warehouse);
});
afterAll(async () => {
  await site?.remove();
});

/**
 * Syncs with a budget far shorter than the site takes to read until a run is not paused; the requests of all of them.
 * ~180 requests slowed to 60 ms, one at a time, take 11 s or more: at least four budgets of 2.5 s on any machine.
 */
async function syncInBudgets(target: { warehouse: string; schema?: string }): Promise<{
  results: SyncResult[];
  requests: Record<string, number>;
}> {
  sim.control.resetCounts();
  sim.control.setLatency({ ms: 60 });
  const results: SyncResult[] = [];
  try {
    do {
      results.push(
        await syncOnce(sim, { credentials: site.credentials, ...target, concurrency: 1, maxDuration: '2500ms' }),
      );
    } while (results.at(-1)?.status === 'paused' && results.length < 40);
  } finally {
    sim.control.setLatency({ ms: 0 });
  }
  return { results, requests: sim.control.counts().byRequest };
}

/** Requests the budgeted runs made more often than the uninterrupted sync did (none: nothing fetched twice). */
function fetchedAgain(requests: Record<string, number>): Record<string, string> {
  const extra: Record<string, string> = {};
  for (const [request, n] of Object.entries(requests)) {
    const once = referenceRequests[request] ?? 0;
    if (!perRunCalls.test(request) && n > once) extra[request] = `${n} times, uninterrupted ${once}`;
  }
  return extra;
}

async function runStatuses(target: string, schema?: string): Promise<string[]> {
  const w = await openWarehouse(target, { schema, logger: silentLogger });
  try {
    return (await w.listRuns(100)).map((r) => r.status);
  } finally {
    await w.close();
  }
}

describe('a first sync in time budgets', () => {
  it('DuckDB: pauses at least three times (exit 0), then completes equal to one uninterrupted sync', async () => {
    const warehouse = join(site.dir, 'budget.duckdb');
    const { results, requests } = await syncInBudgets({ warehouse });
    const statuses = results.map((r) => r.status);
    expect(statuses.slice(0, -1).every((s) => s === 'paused')).toBe(true);
    expect(statuses.length - 1).toBeGreaterThanOrEqual(3);
    expect(statuses.at(-1)).toBe('succeeded');
    expect(results.every((r) => r.exitCode === 0)).toBe(true);
    // One run continued throughout: every attempt after the first resumed it.
    expect(new Set(results.map((r) => r.runId)).size).toBe(1);
    expect(results.slice(1).every((r) => r.resumed)).toBe(true);
    // A paused run builds no model: a half-read site is not modelled.
    expect(results.slice(0, -1).every((r) => r.after === null)).toBe(true);
    expect(await runStatuses(warehouse)).toEqual(['succeeded']);
    expect(fetchedAgain(requests)).toEqual({});
    await expectSameWarehouse(warehouse, reference);
  }, 300_000);

  it('Postgres: the same', async () => {
    const pg = await postgresSchema();
    try {
      const { results, requests } = await syncInBudgets({ warehouse: pg.url, schema: pg.schema });
      expect(results.length - 1).toBeGreaterThanOrEqual(3);
      expect(results.slice(0, -1).every((r) => r.status === 'paused')).toBe(true);
      expect(results.at(-1)?.status).toBe('succeeded');
      expect(fetchedAgain(requests)).toEqual({});
      await expectSameWarehouse(pg.url, reference, { schema: pg.schema });
    } finally {
      await pg.drop();
    }
  }, 300_000);
});

describe('grantflow sync --max-duration', () => {
  it('records the run as paused, exits 0 and says the next sync continues', async () => {
    const dir = join(site.dir, 'cli');
    sim.control.setLatency({ ms: 40 });
    let r;
    try {
      r = await runCli([
        ...syncCliArgs(sim.url, dir, { credentials: site.credentials }),
        '--concurrency',
        '1',
        '--max-duration',
        '1s',
      ]);
    } finally {
      sim.control.setLatency({ ms: 0 });
    }
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/: PAUSED in /);
    expect(r.stdout).toMatch(/--max-duration 1s\) ran out; what was fetched is committed and the next sync continues/);
    const w = await openWarehouse(join(dir, 'warehouse.duckdb'), { logger: silentLogger });
    try {
      const runs = await w.listRuns(10);
      expect(runs.map((run) => run.status)).toEqual(['paused']);
      // What `grantflow status` says of it.
      expect(runReason(runs[0]?.summary)).toBe('time budget of 1s reached: the next sync continues');
    } finally {
      await w.close();
    }
  });

  it('is a setting `grantflow config` shows, from GRANTFLOW_MAX_DURATION too', async () => {
    const shown = await runCli(['config'], { env: { GRANTFLOW_MAX_DURATION: '5h30m' } });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^maxDuration +5h30m +variable GRANTFLOW_MAX_DURATION$/m);
  });
});
