/**
 * The state a fan-out stream keeps between runs (parent marks, the last full refresh) must not make later runs skip
 * parents whose children were never read: an incremental run ends with the live rows a fresh sync would load.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import {
  dumpWarehouse,
  proxySite,
  runCli,
  siteWithWarehouse,
  syncCliArgs,
  syncOnce,
  syncWithoutModels,
} from '../support/harness.ts';
import { killOnStderr, killWhen } from '../support/faults.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function setup(seed: number): Promise<{ sim: SimulatorHandle; dir: string; credentials: string }> {
  const site = await siteWithWarehouse({ scale: 'tiny', seed });
  cleanup.push(site.remove);
  return site;
}

/** The live rows (soft-deleted ones are history by design) of `tables`, comparable between warehouses. */
async function liveRows(warehouse: string, tables: readonly string[]): Promise<Record<string, unknown[]>> {
  const dump = await dumpWarehouse(warehouse);
  return Object.fromEntries(
    tables.map((t) => [t, (dump[t]?.content ?? []).filter((r) => r._deleted !== true && r._deleted !== 1)]),
  );
}

describe('fan-out state between runs', () => {
  it('a feature that was off (every parent answered 404) is read as soon as it is on', async () => {
    const { sim, dir, credentials } = await setup(7);
    const warehouse = join(dir, 'w.duckdb');
    sim.control.setFeatures({ eligibility: false });
    const off = await syncWithoutModels(sim, { credentials, warehouse });
    expect(off.streams.find((s) => s.stream === 'eligibility')?.reason).toMatch(/answered 404/);
    sim.control.setFeatures({ eligibility: true });
    const on = await syncWithoutModels(sim, { credentials, warehouse });
    const info = on.streams.find((s) => s.stream === 'eligibility');
    expect(info?.parents?.fetched).toBe(info?.parents?.total);
    const fresh = join(dir, 'fresh.duckdb');
    expect((await syncWithoutModels(sim, { credentials, warehouse: fresh })).status).toBe('succeeded');
    const tables = ['eligibility', 'eligibility_responses'];
    const mine = await liveRows(warehouse, tables);
    expect(mine.eligibility?.length).toBeGreaterThan(0);
    expect(mine).toEqual(await liveRows(fresh, tables));
  });

  it('a full refresh whose parent list was cut short is finished by the next run', async () => {
    const { sim, dir, credentials } = await setup(7);
    const warehouse = join(dir, 'w.duckdb');
    const perPage = 10;
    expect((await syncWithoutModels(sim, { credentials, warehouse, perPage })).status).toBe('succeeded');
    // Child edits that do not move the parent's updated_at: what a full refresh is for.
    expect(sim.control.applyChanges({ childEdits: 12 }).childEdits?.length).toBe(12);
    const lastPage = String(Math.ceil(sim.control.collection('applications').length / perPage));
    const proxy = await proxySite(
      sim.url,
      () => undefined,
      (url, body) =>
        url.pathname === '/api/applications/' && url.searchParams.get('page') === lastPage
          ? JSON.stringify({ ...(JSON.parse(body) as object), results: [] })
          : body,
    );
    cleanup.push(proxy.close);
    // The proxy is the same site at another address: each switch between them is a --site-moved.
    const cut = await syncWithoutModels(
      { ...sim, url: proxy.url },
      { credentials, warehouse, perPage, fullRefresh: true, siteMoved: true },
    );
    expect(cut.streams.find((s) => s.stream === 'applications')?.complete).toBe(false);
    await proxy.close();
    const next = await syncWithoutModels(sim, { credentials, warehouse, perPage, siteMoved: true });
    expect(next.streams.find((s) => s.stream === 'application_tasks')?.fullRefresh).toBe(true);
    const fresh = join(dir, 'fresh.duckdb');
    expect((await syncWithoutModels(sim, { credentials, warehouse: fresh, perPage })).status).toBe('succeeded');
    const tables = ['application_tasks', 'task_responses', 'application_notes'];
    expect(await liveRows(warehouse, tables)).toEqual(await liveRows(fresh, tables));
  });

  it('a --full-refresh killed halfway is resumed as a full refresh, so child edits only it reads are not missed', async () => {
    const { sim, dir, credentials } = await setup(17);
    const warehouse = join(dir, 'w.duckdb');
    expect((await syncWithoutModels(sim, { credentials, warehouse })).status).toBe('succeeded');
    expect(sim.control.applyChanges({ childEdits: 20 }).childEdits?.length).toBe(20);
    sim.control.resetCounts();
    sim.control.setLatency({ ms: 10 });
    const tasks = 'GET /api/applications/{id}/tasks/';
    const killed = await runCli(
      [...syncCliArgs(sim.url, dir, { credentials, warehouse: ['--warehouse', warehouse] }), '--full-refresh'],
      { onSpawn: (child) => killWhen(child, () => (sim.control.counts().byTemplate[tasks] ?? 0) >= 5) },
    );
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    sim.control.setLatency({ ms: 0 });
    // A plain sync resumes the killed run, and with it the full refresh it was asked for.
    const resumed = await syncWithoutModels(sim, { credentials, warehouse });
    expect(resumed.resumed).toBe(true);
    expect(resumed.streams.find((s) => s.stream === 'application_tasks')?.fullRefresh).toBe(true);
    const fresh = join(dir, 'fresh.duckdb');
    expect((await syncWithoutModels(sim, { credentials, warehouse: fresh })).status).toBe('succeeded');
    const tables = ['application_tasks', 'task_responses', 'application_notes', 'application_stages'];
    expect(await liveRows(warehouse, tables)).toEqual(await liveRows(fresh, tables));
  });

  it('a --full-refresh that resumes a killed plain run reads again the parents that run had read', async () => {
    const { sim, dir, credentials } = await setup(19);
    const warehouse = join(dir, 'w.duckdb');
    expect((await syncWithoutModels(sim, { credentials, warehouse })).status).toBe('succeeded');
    // Three applications change: the plain run reads their children, commits them, and is killed.
    const updated = sim.control.applyChanges({ updated: 3 }).updated;
    const killed = await runCli(syncCliArgs(sim.url, dir, { credentials, warehouse: ['--warehouse', warehouse] }), {
      env: { GRANTFLOW_TEST_DELAY_AFTER_COMMIT_MS: '300' },
      onSpawn: (child) => killOnStderr(child, 'load transaction committed (stream application_tasks)', 1),
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // Then their tasks are edited without touching the applications: only a full refresh reads that.
    for (const id of updated) {
      const task = sim.control.data.children(id)!.tasks[0]!;
      task.data = { ...(task.data as object), edited: `after the kill ${id}` };
    }
    const refreshed = await syncWithoutModels(sim, { credentials, warehouse, fullRefresh: true });
    expect(refreshed.resumed).toBe(true);
    const fresh = join(dir, 'fresh.duckdb');
    expect((await syncWithoutModels(sim, { credentials, warehouse: fresh })).status).toBe('succeeded');
    const tables = ['application_tasks', 'task_responses'];
    expect(await liveRows(warehouse, tables)).toEqual(await liveRows(fresh, tables));
  });

  it('a resumed --full-refresh does not read again a fan-out stream it refreshed whole before the kill', async () => {
    const { sim, dir, credentials } = await setup(24);
    const warehouse = join(dir, 'w.duckdb');
    // While `holding`, payments' list gets no answer: the run is still running after application_tasks is done.
    let holding = false;
    const proxy = await proxySite(sim.url, (url) =>
      holding && url.pathname.startsWith('/api/payments/') ? new Promise<void>(() => undefined) : undefined,
    );
    cleanup.push(proxy.close);
    const viaProxy = (more: object = {}) =>
      syncWithoutModels(sim, { site: proxy.url, credentials, warehouse, ...more });
    expect((await viaProxy()).status).toBe('succeeded');
    const streams = ['applications', 'application_tasks', 'payments'];
    const tasks = 'GET /api/applications/{id}/tasks/';
    const applications = sim.control.collection('applications').length;
    sim.control.resetCounts();
    holding = true;
    let allReadAt = Infinity;
    const killed = await runCli(
      [
        ...syncCliArgs(proxy.url, dir, { credentials, warehouse: ['--warehouse', warehouse] }),
        ...['--streams', streams.join(','), '--full-refresh'],
      ],
      {
        onSpawn: (child) =>
          killWhen(child, () => {
            if (allReadAt === Infinity && (sim.control.counts().byTemplate[tasks] ?? 0) >= applications)
              allReadAt = Date.now();
            // Time for the last checkpoint to commit; the run then waits for payments.
            return Date.now() - allReadAt > 4000;
          }),
      },
    );
    holding = false;
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // The stream was committed whole under the killed run, which waits to be resumed.
    const w = await openWarehouse(warehouse, { logger: silentLogger });
    try {
      const [last] = await w.listRuns(1);
      expect(last?.status).toBe('running');
      expect((await w.readState('application_tasks')) as { lastCompleteRunId?: string }).toMatchObject({
        lastCompleteRunId: last?.runId,
      });
    } finally {
      await w.close();
    }
    sim.control.resetCounts();
    const resumed = await viaProxy({ streams });
    expect(resumed.resumed).toBe(true);
    expect(resumed.streams.find((s) => s.stream === 'application_tasks')?.fullRefresh).toBe(true);
    expect(sim.control.counts().byTemplate[tasks] ?? 0).toBe(0);
  });

  it('a resumed --full-refresh covers only the streams its run selected', async () => {
    const { sim, dir, credentials } = await setup(18);
    const warehouse = join(dir, 'w.duckdb');
    expect((await syncWithoutModels(sim, { credentials, warehouse })).status).toBe('succeeded');
    sim.control.resetCounts();
    sim.control.setLatency({ ms: 10 });
    const tasks = 'GET /api/applications/{id}/tasks/';
    const selection = ['--streams', 'applications,application_tasks', '--full-refresh'];
    const killed = await runCli(
      [...syncCliArgs(sim.url, dir, { credentials, warehouse: ['--warehouse', warehouse] }), ...selection],
      { onSpawn: (child) => killWhen(child, () => (sim.control.counts().byTemplate[tasks] ?? 0) >= 5) },
    );
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    sim.control.setLatency({ ms: 0 });
    const resumed = await syncWithoutModels(sim, { credentials, warehouse });
    expect(resumed.resumed).toBe(true);
    const refreshed = (name: string) => resumed.streams.find((s) => s.stream === name)?.fullRefresh;
    expect(refreshed('application_tasks')).toBe(true);
    for (const other of ['application_notes', 'application_stages', 'organization_members'])
      expect(refreshed(other), other).toBe(false);
  });
  it('a parent with a quarantined child is read again by every run until the child loads', async () => {
    const { sim, dir, credentials } = await setup(23);
    const warehouse = join(dir, 'w.duckdb');
    expect((await syncWithoutModels(sim, { credentials, warehouse })).status).toBe('succeeded');
    const parent = sim.control.data.applications.rows.find(
      (a) => (sim.control.data.children(Number(a.id))?.stages.length ?? 0) > 0,
    )!;
    const stage = sim.control.data.children(Number(parent.id))!.stages[0]!;
    const stageId = Number((stage.stage as { id: number }).id);
    // The parent itself does not change: a full refresh reads the stage, and the parent's stored mark still
    // matches its marker, so only dropping that mark makes the next run read it again.
    stage.created_at = 'not a time';
    const stagesOf = (r: Awaited<ReturnType<typeof syncOnce>>) =>
      r.streams.find((s) => s.stream === 'application_stages');
    const refreshed = stagesOf(await syncWithoutModels(sim, { credentials, warehouse, fullRefresh: true }));
    expect(refreshed?.quarantined).toBe(1);
    const again = stagesOf(await syncWithoutModels(sim, { credentials, warehouse }));
    expect(again?.parents?.fetched).toBe(1);
    expect(again?.quarantined).toBe(1);

    const fixedAt = '2026-01-02T03:04:05Z';
    stage.created_at = fixedAt;
    const loaded = stagesOf(await syncWithoutModels(sim, { credentials, warehouse }));
    expect(loaded?.parents?.fetched).toBe(1);
    expect(loaded?.quarantined).toBe(0);
    const row = (await liveRows(warehouse, ['application_stages'])).application_stages?.find(
      (r) =>
        (r as { application_id: unknown }).application_id === Number(parent.id) &&
        (r as { stage_id: unknown }).stage_id === stageId,
    );
    expect(row).toBeDefined();
    expect(new Date(String((row as { created_at: unknown }).created_at)).toISOString()).toBe(
      new Date(fixedAt).toISOString(),
    );
    expect(stagesOf(await syncWithoutModels(sim, { credentials, warehouse }))?.parents?.fetched).toBe(0);
  });
});
