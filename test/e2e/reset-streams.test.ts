/** `grantflow reset --streams x`: the next sync reads x whole, as the simulator's request counts show. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteWithWarehouse, syncOnce } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

let site: Awaited<ReturnType<typeof siteWithWarehouse>>;
beforeAll(async () => {
  site = await siteWithWarehouse({ seed: 29 });
});
afterAll(async () => {
  await site.remove();
});

const tasks = 'GET /api/applications/{id}/tasks/';
const notes = 'GET /api/applications/{id}/notes/';
const activity = 'GET /api/activity/';

describe('grantflow reset --streams', () => {
  it("forgets a fan-out stream's parent marks and an append-only log's newest id; others stay incremental", async () => {
    const { sim, credentials, warehouse } = site;
    const first = await syncOnce(sim, { credentials, warehouse });
    expect(first.status).toBe('succeeded');
    const applications = first.streams.find((s) => s.stream === 'applications')?.records ?? 0;
    expect(applications).toBeGreaterThan(1);

    // Nothing changed: an incremental sync reads no application's children.
    sim.control.resetCounts();
    expect((await syncOnce(sim, { credentials, warehouse })).status).toBe('succeeded');
    expect(sim.control.counts().byTemplate[tasks] ?? 0).toBe(0);
    const activityPagesIncremental = sim.control.counts().byTemplate[activity] ?? 0;

    const reset = await runCliInProcess(['reset', '--streams', 'application_tasks,activity', '--warehouse', warehouse]);
    expect(reset.stderr).toBe('');
    expect(reset.code).toBe(0);
    expect(reset.stdout).toMatch(
      new RegExp(`application_tasks +state forgotten, ${applications} parent marks dropped`),
    );
    expect(reset.stdout).toMatch(/activity +state forgotten\n/);

    sim.control.resetCounts();
    const next = await syncOnce(sim, { credentials, warehouse });
    expect(next.status).toBe('succeeded');
    const counts = sim.control.counts().byTemplate;
    // Every application's tasks again; the notes, not reset, still none.
    expect(counts[tasks]).toBe(applications);
    expect(counts[notes] ?? 0).toBe(0);
    const read = next.streams.find((s) => s.stream === 'activity');
    expect(read?.caughtUp).toBeFalsy();
    expect(counts[activity]).toBeGreaterThanOrEqual(activityPagesIncremental);
  });

  it('refuses an unknown stream and a missing --streams with one line, exit 2', async () => {
    const unknown = await runCliInProcess(['reset', '--streams', 'nope', '--warehouse', site.warehouse]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toMatch(/nope/);
    const missing = await runCliInProcess(['reset', '--warehouse', site.warehouse]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^grantflow: --streams is required/);
  });
});
