/**
 * `fullRefreshMode: rolling`: instead of every application's children at once every N days, each run reads again
 * those of the 1/N of applications read longest ago, so runs cost the same and a child edited without its parent is
 * in the warehouse within N runs. On DuckDB and on Postgres.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { postgresSchema, siteWithWarehouse, syncOnce } from '../support/harness.ts';

/** N: the refresh period in days, one run taken as one day. */
const days = 5;
const perApplication = [
  'GET /api/applications/{id}/tasks/',
  'GET /api/applications/{id}/stages/',
  'GET /api/applications/{id}/notes/',
];

let site: Awaited<ReturnType<typeof siteWithWarehouse>>;
let sim: SimulatorHandle;

beforeAll(async () => {
  site = await siteWithWarehouse({ scale: 'tiny', seed: 43 });
  sim = site.sim;
});
afterAll(async () => {
  await site?.remove();
});

/** Applications whose task data the simulator edited without touching the application. */
function taskEdited(): number[] {
  const ids = sim.control
    .collection('application_tasks')
    .filter((t) => typeof t.data === 'object' && t.data !== null && 'edited' in t.data)
    .map((t) => Number(t.application_id));
  return [...new Set(ids)].sort((a, b) => a - b);
}

/**
 * A first sync, then child edits the parents do not show, then N runs in rolling mode: per run, the calls of each
 * per-application stream; per application, the runs that read its tasks; and when the edits were all seen.
 */
async function rollingRuns(target: { warehouse: string; schema?: string }) {
  // No models: the runs are about what they read.
  const settings = { credentials: site.credentials, ...target, fullRefreshAfterDays: days, models: false };
  expect((await syncOnce(sim, { ...settings, fullRefreshMode: 'rolling' })).status).toBe('succeeded');
  sim.control.applyChanges({ childEdits: 6 });
  const edited = taskEdited();
  expect(edited.length).toBeGreaterThan(0);
  const calls: Record<string, number>[] = [];
  const tasksRead = new Map<number, number>();
  const seenAfter: number[][] = [];
  for (let run = 1; run <= days; run++) {
    sim.control.resetCounts();
    const result = await syncOnce(sim, { ...settings, fullRefreshMode: 'rolling' });
    expect(result.status).toBe('succeeded');
    const counts = sim.control.counts();
    calls.push(Object.fromEntries(perApplication.map((t) => [t, counts.byTemplate[t] ?? 0])));
    for (const path of Object.keys(counts.byPath)) {
      const id = /^GET \/api\/applications\/(\d+)\/tasks\/$/.exec(path)?.[1];
      if (id) tasksRead.set(Number(id), (tasksRead.get(Number(id)) ?? 0) + 1);
    }
    seenAfter.push(await editedInWarehouse(target));
  }
  return { edited, calls, tasksRead, seenAfter };
}

async function editedInWarehouse(target: { warehouse: string; schema?: string }): Promise<number[]> {
  const w = await openWarehouse(target.warehouse, { schema: target.schema, logger: silentLogger });
  try {
    const rows = await w.query(
      `SELECT DISTINCT application_id FROM task_responses WHERE question_id = 'edited' AND _deleted_at IS NULL`,
    );
    return rows.map((r) => Number(r.application_id)).sort((a, b) => a - b);
  } finally {
    await w.close();
  }
}

function expectRolling(out: Awaited<ReturnType<typeof rollingRuns>>): void {
  const applications = sim.control.collection('applications').length;
  const share = applications / days;
  // Every run costs about the same: within 10 % of applications / N calls per per-application stream.
  for (const run of out.calls)
    for (const [template, n] of Object.entries(run)) {
      expect(n, template).toBeGreaterThanOrEqual(Math.floor(share * 0.9));
      expect(n, template).toBeLessThanOrEqual(Math.ceil(share * 1.1));
    }
  // Over N runs every application was read again, once.
  expect(out.tasksRead.size).toBe(applications);
  expect(new Set(out.tasksRead.values())).toEqual(new Set([1]));
  // Edits the applications do not show are in the warehouse within N runs, and not all before (it rolls).
  expect(out.seenAfter.at(-1)).toEqual(out.edited);
  expect(out.seenAfter[0]?.length ?? 0).toBeLessThan(out.edited.length);
}

// Six syncs each: a loaded machine takes minutes.
describe('a rolling full refresh', () => {
  it('DuckDB: each run reads the children of 1/N of the applications, all of them within N runs', async () => {
    expectRolling(await rollingRuns({ warehouse: join(site.dir, 'rolling.duckdb') }));
  }, 300_000);

  it('Postgres: the same', async () => {
    const pg = await postgresSchema();
    try {
      expectRolling(await rollingRuns({ warehouse: pg.url, schema: pg.schema }));
    } finally {
      await pg.drop();
    }
  }, 300_000);
});
