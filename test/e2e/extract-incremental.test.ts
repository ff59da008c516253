/**
 * Issue 3 acceptance: incremental syncs. No change → no per-application calls; changes made through the API →
 * per-application calls only for those; a deleted application is soft-deleted with its children; child edits that
 * do not move the parent are caught by a full refresh.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { startSite, syncWithoutModels, tempDir, writeCredentials } from '../support/harness.ts';
import { routeTemplate } from '../../src/simulator/stream-serving.ts';
import { streamCatalog } from '../../src/streams/registry.ts';

/** The fan-out streams of a parent stream, by the registry. */
const childrenOf = (parent: string) => streamCatalog.filter((s) => s.parent?.stream === parent);
const perApplication = childrenOf('applications');
const perApplicationTemplates = perApplication.map((s) => `GET ${routeTemplate(s.path)}`);
const perOrganizationTemplates = childrenOf('organizations').map((s) => `GET ${routeTemplate(s.path)}`);
/** A concrete per-application path (`GET /api/applications/7/tasks/`), its application id captured. */
const perApplicationPath = new RegExp(
  `^GET (?:${perApplication.map((s) => s.path.replace('{parent}', '(\\d+)')).join('|')})$`,
);

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let credentials: string;
let warehouse: string;

/** Calls the site's API as an administrator would, with the current token of the sync's credential set. */
async function api(method: string, path: string, body?: unknown): Promise<number> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${sim.credentials.access_token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

function perApplicationCalls(): Map<number, number> {
  const calls = new Map<number, number>();
  for (const [path, n] of Object.entries(sim.control.counts().byPath)) {
    const m = perApplicationPath.exec(path);
    const id = m?.slice(1).find((g) => g !== undefined);
    if (id !== undefined) calls.set(Number(id), (calls.get(Number(id)) ?? 0) + n);
  }
  return calls;
}

async function query(sql: string) {
  const w = await openWarehouse(warehouse, { logger: silentLogger });
  try {
    return await w.query(sql);
  } finally {
    await w.close();
  }
}

beforeAll(async () => {
  sim = await startSite({ scale: 'small', seed: 5 });
  dir = await tempDir();
  credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  warehouse = join(dir.path, 'w.duckdb');
  const first = await syncWithoutModels(sim, { credentials, warehouse });
  expect(first.status).toBe('succeeded');
});
afterAll(async () => {
  await sim.close();
  await dir.remove();
});

describe('incremental sync', () => {
  it('makes no per-application or per-organization call when nothing changed', async () => {
    sim.control.resetCounts();
    const result = await syncWithoutModels(sim, { credentials, warehouse });
    expect(result.status).toBe('succeeded');
    const counts = sim.control.counts();
    for (const t of [...perApplicationTemplates, ...perOrganizationTemplates])
      expect(counts.byTemplate[t] ?? 0, t).toBe(0);
    const topLevelPages = Object.entries(counts.byTemplate)
      .filter(([t]) => !t.includes('{id}') && t.startsWith('GET '))
      .reduce((a, [, n]) => a + n, 0);
    expect(topLevelPages).toBeGreaterThan(0);
    expect(counts.total).toBeLessThanOrEqual(Math.ceil(topLevelPages * 1.1));
  });

  it('after 1 % of applications change through the API, calls only for those', async () => {
    const apps = sim.control.collection('applications');
    const changed = apps.filter((_a, i) => i % 100 === 17).map((a) => Number(a.id));
    expect(changed.length).toBe(Math.round(apps.length / 100));
    for (const id of changed)
      expect(await api('PATCH', `/api/applications/${id}/`, { title: `Renamed ${id} ✓` })).toBe(200);
    sim.control.resetCounts();
    const result = await syncWithoutModels(sim, { credentials, warehouse });
    expect(result.status).toBe('succeeded');
    const calls = perApplicationCalls();
    expect([...calls.keys()].sort((a, b) => a - b)).toEqual([...changed].sort((a, b) => a - b));
    for (const id of changed) expect(calls.get(id)).toBe(perApplication.length);
    const titles = await query(`SELECT id, title FROM applications WHERE id IN (${changed.join(',')})`);
    for (const t of titles) expect(t.title).toBe(`Renamed ${String(t.id)} ✓`);
  });

  it('shows a renamed applicant on the next sync that reads a record naming them, though the new name is shorter', async () => {
    const renamed = sim.control.applyChanges({ renamed: 3 }).renamed;
    expect(renamed.length).toBe(3);
    const applicants = sim.control
      .collection('applications')
      .filter((a) => renamed.includes(Number(a.id)))
      .map((a) => Number((a.applicant as { id: number }).id));
    const names = () =>
      query(`SELECT id, first_name, last_name, email FROM users WHERE id IN (${applicants.join(',')}) ORDER BY id`);
    const site = sim.control
      .collection('users')
      .filter((u) => applicants.includes(Number(u.id)))
      .map((u) => ({ id: Number(u.id), first_name: u.first_name, last_name: u.last_name, email: u.email }))
      .sort((a, b) => a.id - b.id);
    const before = await names();
    expect(before.map((u) => u.last_name)).not.toEqual(site.map((u) => u.last_name));
    await syncWithoutModels(sim, { credentials, warehouse });
    expect(await names()).toEqual(site);
    // Reading every record again (each naming the user the new way, some richer) and then nothing new changes none.
    await syncWithoutModels(sim, { credentials, warehouse, fullRefresh: true });
    expect(await names()).toEqual(site);
    const users = 'SELECT id, first_name, last_name, email, CAST(_raw AS TEXT) AS raw FROM users ORDER BY id';
    const settled = await query(users);
    await syncWithoutModels(sim, { credentials, warehouse });
    expect(await query(users)).toEqual(settled);
  });

  it('marks a deleted application and its children with _deleted_at, and keeps them', async () => {
    const victim = Number(sim.control.collection('applications')[3]!.id);
    const children = {
      application_stages: sim.control.collection('application_stages', { application: victim }).length,
      application_tasks: sim.control.collection('application_tasks', { application: victim }).length,
      application_notes: sim.control.collection('application_notes', { application: victim }).length,
    };
    expect(children.application_tasks).toBeGreaterThan(0);
    expect(await api('DELETE', `/api/applications/${victim}/`)).toBe(204);
    sim.control.resetCounts();
    const result = await syncWithoutModels(sim, { credentials, warehouse });
    expect(result.status).toBe('succeeded');
    expect(perApplicationCalls().size).toBe(0);
    const [app] = await query(`SELECT _deleted_at FROM applications WHERE id = ${victim}`);
    expect(app?._deleted_at).not.toBeNull();
    for (const [table, n] of Object.entries(children)) {
      const rows = await query(`SELECT _deleted_at FROM ${table} WHERE application_id = ${victim}`);
      expect(rows.length, table).toBe(n);
      expect(
        rows.every((r) => r._deleted_at !== null),
        table,
      ).toBe(true);
    }
    const responses = await query(
      `SELECT count(*) AS n FROM task_responses WHERE application_id = ${victim} AND _deleted_at IS NULL`,
    );
    expect(Number(responses[0]?.n)).toBe(0);
    const live = await query(`SELECT count(*) AS n FROM applications WHERE _deleted_at IS NULL`);
    expect(Number(live[0]?.n)).toBe(sim.control.collection('applications').length);
  });

  it('misses child edits that do not touch the parent until a full refresh, which catches them', async () => {
    const edits = sim.control.applyChanges({ childEdits: 5 }).childEdits;
    expect(edits.length).toBe(5);
    const editedTasks = () =>
      query(`SELECT DISTINCT application_id FROM task_responses WHERE question_id = 'edited' AND _deleted_at IS NULL`);
    await syncWithoutModels(sim, { credentials, warehouse });
    const taskEdited = sim.control
      .collection('application_tasks')
      .filter((t) => typeof t.data === 'object' && t.data !== null && 'edited' in t.data)
      .map((t) => Number(t.application_id));
    expect(taskEdited.length).toBeGreaterThan(0);
    expect((await editedTasks()).length).toBe(0);
    sim.control.resetCounts();
    const full = await syncWithoutModels(sim, { credentials, warehouse, fullRefresh: true });
    expect(full.status).toBe('succeeded');
    expect(perApplicationCalls().size).toBe(sim.control.collection('applications').length);
    const seen = (await editedTasks()).map((r) => Number(r.application_id)).sort((a, b) => a - b);
    expect(seen).toEqual([...new Set(taskEdited)].sort((a, b) => a - b));
  });
});
