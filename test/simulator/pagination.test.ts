import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.ts';
import { api, arr, idOf, obj, walk } from '../support/simulator-api.ts';

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ scale: 'tiny', seed: 7, rate: 0 });
});
afterAll(() => sim.close());

describe('pagination', () => {
  it('a next walk returns every application exactly once, in id order, with absolute URLs', async () => {
    const { records, pages } = await walk(sim, '/api/applications/?per_page=7');
    const ids = records.map((r) => idOf(r));
    const expected = sim.control.data.applications.rows.map((r) => r['id']);
    expect(ids).toEqual(expected);
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages).toBe(Math.ceil(expected.length / 7));
    const first = obj((await api(sim, '/api/applications/?per_page=7')).body);
    expect(first['count']).toBe(expected.length);
    expect(first['previous']).toBeNull();
    expect(String(first['next'])).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/applications\/\?per_page=7&page=2$/);
    const second = obj((await api(sim, String(first['next']))).body);
    expect(String(second['previous'])).toContain('page=1');
  });

  it('activity and log are newest first; every row once', async () => {
    for (const path of ['/api/activity/?per_page=9', '/api/log/?per_page=4']) {
      const { records } = await walk(sim, path);
      const ids = records.map((r) => idOf(r));
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('defaults to 25 per page, clamps per_page to the maximum, 404s an invalid page', async () => {
    expect(arr(obj((await api(sim, '/api/applications/')).body)['results'])).toHaveLength(25);
    sim.control.setPerPageMax(10);
    expect(arr(obj((await api(sim, '/api/applications/?per_page=500')).body)['results'])).toHaveLength(10);
    sim.control.setPerPageMax(100);
    expect((await api(sim, '/api/applications/?page=999')).status).toBe(404);
    expect((await api(sim, '/api/applications/?page=abc')).status).toBe(404);
  });

  it('bare mode returns every row as an unpaginated array, per endpoint', async () => {
    sim.control.setListStyle('bare', '/api/programs/');
    const bare = await api(sim, '/api/programs/?per_page=1');
    expect(arr(bare.body).map((r) => idOf(r))).toEqual(sim.control.data.programs.rows.map((r) => r['id']));
    expect(obj((await api(sim, '/api/funds/')).body)['results']).toBeDefined();
    sim.control.setListStyle('envelope', '/api/programs/');
  });

  it('filters by exact match, references by id', async () => {
    const app = sim.control.data.applications.rows[3];
    const programId = obj(app?.['program'])['id'] as number;
    const { records } = await walk(sim, `/api/applications/?program=${programId}&per_page=100`);
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => obj(r['program'])['id'] === programId)).toBe(true);
    const a = sim.control.data.assignments[0];
    const updated = String(a?.['updated_at']);
    const { records: byUpdated } = await walk(sim, `/api/assignments/?updated_at=${encodeURIComponent(updated)}`);
    expect(byUpdated.every((r) => r['updated_at'] === updated)).toBe(true);
    expect(byUpdated.length).toBeGreaterThan(0);
  });

  it('serves children, details, 404 JSON for unknown paths and missing records', async () => {
    const id = sim.control.data.applications.rows[0]?.['id'] as number;
    const tasks = obj((await api(sim, `/api/applications/${id}/tasks/`)).body);
    const task = obj(arr(tasks['results'])[0]);
    expect(obj((await api(sim, `/api/applications/${id}/tasks/${String(task['id'])}/`)).body)).toEqual(task);
    const stages = arr(obj((await api(sim, `/api/applications/${id}/stages/`)).body)['results']);
    expect(stages.length).toBeGreaterThan(0);
    const missing = await api(sim, '/api/applications/999999/');
    expect(missing.status).toBe(404);
    expect(obj(missing.body)['detail']).toBeTruthy();
    expect((await api(sim, '/api/applications/999999/notes/')).status).toBe(404);
    const unknown = await api(sim, '/api/unknown/');
    expect(unknown.status).toBe(404);
    expect(obj(unknown.body)).toHaveProperty('detail');
    expect((await api(sim, '/api/reportstatuses/?id=1')).status).toBe(200);
  });

  it('eligibility: 404 JSON where an organization has none, and everywhere when disabled', async () => {
    const ds = sim.control.data;
    const withElig = ds.organizations.rows.find((o) => ds.eligibility.has(o['id'] as number));
    const without = ds.organizations.rows.find((o) => !ds.eligibility.has(o['id'] as number));
    expect(withElig).toBeDefined();
    expect((await api(sim, `/api/organizations/${String(withElig?.['id'])}/eligibility/`)).status).toBe(200);
    if (without) expect((await api(sim, `/api/organizations/${String(without['id'])}/eligibility/`)).status).toBe(404);
    if (without) {
      const path = `/api/organizations/${String(without['id'])}/eligibility/`;
      expect((await api(sim, path, { method: 'PUT', body: { is_completed: true, responses: [] } })).status).toBe(201);
      expect(obj((await api(sim, path)).body)['is_completed']).toBe(true);
      expect((await api(sim, path, { method: 'DELETE' })).status).toBe(204);
    }
    sim.control.setFeatures({ eligibility: false });
    const off = await api(sim, `/api/organizations/${String(withElig?.['id'])}/eligibility/`);
    expect(off.status).toBe(404);
    expect(obj(off.body)['detail']).toBeTruthy();
    expect(
      (await api(sim, `/api/organizations/${String(withElig?.['id'])}/eligibility/`, { method: 'PATCH', body: {} }))
        .status,
    ).toBe(404);
    sim.control.setFeatures({ eligibility: true });
  });

  it('permissions and the financial management flag answer 403 JSON', async () => {
    sim.control.setFeatures({ financialManagement: false });
    for (const p of ['/api/financial-transactions/', '/api/funds/', '/api/budgets/'])
      expect((await api(sim, p)).status).toBe(403);
    sim.control.setFeatures({ financialManagement: true });
    const all = [...sim.control.config.permissions];
    sim.control.setPermissions(all.filter((p) => p !== 'Award Applications' && p !== 'Financial Management'));
    expect((await api(sim, '/api/payments/')).status).toBe(403);
    const denied = await api(sim, '/api/funds/');
    expect(denied.status).toBe(403);
    expect(obj(denied.body)['detail']).toContain('Financial Management');
    expect((await api(sim, '/api/awards/')).status).toBe(200);
    sim.control.setPermissions(all);
    expect((await api(sim, '/api/payments/')).status).toBe(200);
  });
});
