import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.ts';
import { api, arr, idOf, obj, walk } from '../support/simulator-api.ts';

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ scale: 'tiny', seed: 21, rate: 0 });
});
afterAll(() => sim.close());

const latestActivity = async (): Promise<Record<string, unknown>> =>
  obj(arr(obj((await api(sim, '/api/activity/?per_page=1')).body)['results'])[0]);

describe('writes change what reads return', () => {
  it('PATCH application moves updated_at and records activity', async () => {
    const before = obj((await api(sim, '/api/applications/2/')).body);
    const res = await api(sim, '/api/applications/2/', {
      method: 'PATCH',
      body: { title: "New 'title' 🚀", state: 1 },
    });
    expect(res.status).toBe(200);
    const after = obj((await api(sim, '/api/applications/2/')).body);
    expect(after['title']).toBe("New 'title' 🚀");
    expect(after['state']).toBe(1);
    expect(after['updated_at']).not.toBe(before['updated_at']);
    expect(await latestActivity()).toMatchObject({ type: 'application_updated', application: { id: 2 } });
    expect((await api(sim, '/api/applications/2/', { method: 'PATCH', body: { state: 4 } })).status).toBe(400);
  });

  it('PATCH task and note CRUD do NOT move the application updated_at', async () => {
    const app = obj((await api(sim, '/api/applications/3/')).body);
    const task = obj(arr(obj((await api(sim, '/api/applications/3/tasks/')).body)['results'])[0]);
    const patched = await api(sim, `/api/applications/3/tasks/${String(task['id'])}/`, {
      method: 'PATCH',
      body: { status: 3, data: { q: 'changed ✓' } },
    });
    expect(patched.status).toBe(200);
    // Served wrapped, as every answer is by default; a question the site never labelled has no label.
    expect(obj(obj(patched.body)['data'])['q']).toEqual({ response: 'changed ✓' });
    expect(obj(patched.body)['updated_at']).not.toBe(task['updated_at']);
    const created = await api(sim, '/api/applications/3/notes/', {
      method: 'POST',
      body: { content: "'; DROP TABLE notes; --", is_private: true },
    });
    expect(created.status).toBe(201);
    const noteId = idOf(created.body);
    expect((await api(sim, `/api/applications/3/notes/${noteId}/`)).status).toBe(200);
    const edited = await api(sim, `/api/applications/3/notes/${noteId}/`, {
      method: 'PATCH',
      body: { content: 'edited' },
    });
    expect(obj(edited.body)).toMatchObject({ content: 'edited', edited: true });
    expect((await api(sim, `/api/applications/3/notes/${noteId}/`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(sim, `/api/applications/3/notes/${noteId}/`)).status).toBe(404);
    expect(obj((await api(sim, '/api/applications/3/')).body)['updated_at']).toBe(app['updated_at']);
  });

  it('DELETE application removes it and its children', async () => {
    const assigned = sim.control.data.assignments.find((a) => obj(a['application'])['id'] !== 2);
    const appId = obj(assigned?.['application'])['id'] as number;
    expect((await api(sim, `/api/applications/${appId}/`, { method: 'DELETE' })).status).toBe(204);
    for (const p of ['', 'tasks/', 'notes/', 'stages/'])
      expect((await api(sim, `/api/applications/${appId}/${p}`)).status).toBe(404);
    const { records } = await walk(sim, `/api/assignments/?application=${appId}`);
    expect(records).toHaveLength(0);
    const all = await walk(sim, '/api/applications/?per_page=100');
    expect(all.records.map((r) => idOf(r))).not.toContain(appId);
  });

  it('assignments and team assignments: POST then DELETE', async () => {
    const reviewer = sim.control.data.reviewers[0]?.id ?? 0;
    const stage = obj(obj((await api(sim, '/api/applications/4/')).body)['current_stage'])['id'] as number;
    expect(
      (await api(sim, '/api/assignments/', { method: 'POST', body: { applications: [4], stage, reviewer } })).status,
    ).toBe(201);
    let found = await walk(sim, `/api/assignments/?application=4&reviewer=${reviewer}&stage=${stage}`);
    expect(found.records).toHaveLength(1);
    expect(typeof found.records[0]?.['updated_at']).toBe('string');
    expect(
      (await api(sim, `/api/assignments/?application=4&reviewer=${reviewer}&stage=${stage}`, { method: 'DELETE' }))
        .status,
    ).toBe(204);
    found = await walk(sim, `/api/assignments/?application=4&reviewer=${reviewer}&stage=${stage}`);
    expect(found.records).toHaveLength(0);
    const team = [...sim.control.data.teams.values()].flat()[0];
    expect(team).toBeDefined();
    expect(
      (
        await api(sim, '/api/teamassignments/', {
          method: 'POST',
          body: { applications: [4], stage, team: team?.['id'] ?? 0 },
        })
      ).status,
    ).toBe(201);
    expect((await walk(sim, `/api/teamassignments/?application=4&team=${String(team?.['id'])}`)).records).toHaveLength(
      1,
    );
    expect(
      (
        await api(sim, `/api/teamassignments/?application=4&team=${String(team?.['id'])}&stage=${stage}`, {
          method: 'DELETE',
        })
      ).status,
    ).toBe(204);
    expect((await api(sim, '/api/assignments/', { method: 'POST', body: { applications: [4] } })).status).toBe(400);
  });

  it('organizations, members and teams', async () => {
    const admin = sim.control.data.applicants[0];
    const created = await api(sim, '/api/organizations/', {
      method: 'POST',
      body: { name: 'Zoë\'s "Org"', primary_admin: admin?.id ?? 0, city: 'Zürich' },
    });
    expect(created.status).toBe(201);
    const orgId = idOf(created.body);
    expect(obj((await api(sim, `/api/organizations/${orgId}/`)).body)['city']).toBe('Zürich');
    expect((await api(sim, `/api/organizations/${orgId}/`, { method: 'PATCH', body: { city: 'Genève' } })).status).toBe(
      200,
    );
    const other = sim.control.data.applicants[1];
    expect(
      (
        await api(sim, `/api/organizations/${orgId}/members/`, {
          method: 'POST',
          body: { email: other?.email ?? '', is_admin: false, status: 1 },
        })
      ).status,
    ).toBe(201);
    expect(arr(obj((await api(sim, `/api/organizations/${orgId}/members/`)).body)['results'])).toHaveLength(2);
    expect(
      (
        await api(sim, `/api/organizations/${orgId}/members/${other?.id ?? 0}/`, {
          method: 'PATCH',
          body: { is_admin: true },
        })
      ).status,
    ).toBe(200);
    expect(
      (await api(sim, `/api/organizations/${orgId}/members/${admin?.id ?? 0}/`, { method: 'DELETE' })).status,
    ).toBe(400);
    expect(
      (await api(sim, `/api/organizations/${orgId}/members/${other?.id ?? 0}/`, { method: 'DELETE' })).status,
    ).toBe(204);
    expect(
      (await api(sim, `/api/organizations/${orgId}/teams/`, { method: 'POST', body: { name: 'Reviewers' } })).status,
    ).toBe(201);
    const teams = arr(obj((await api(sim, `/api/organizations/${orgId}/teams/`)).body)['results']);
    const teamId = idOf(teams[0]);
    expect(
      (await api(sim, `/api/organizations/${orgId}/teams/${teamId}/`, { method: 'PATCH', body: { name: 'Renamed' } }))
        .status,
    ).toBe(200);
    expect((await api(sim, `/api/organizations/${orgId}/teams/${teamId}/`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(sim, `/api/organizations/${orgId}/`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(sim, `/api/organizations/${orgId}/`)).status).toBe(404);
  });

  it('applyChanges: created, updated, deleted and child edits, disjoint and visible to reads', async () => {
    const before = new Map(sim.control.data.applications.rows.map((a) => [a['id'] as number, String(a['updated_at'])]));
    const result = sim.control.applyChanges({ created: 3, updated: 2, deleted: 2, childEdits: 4 });
    expect(result.created).toHaveLength(3);
    expect(result.updated).toHaveLength(2);
    expect(result.deleted).toHaveLength(2);
    expect(result.childEdits).toHaveLength(4);
    const all = [...result.updated, ...result.deleted, ...result.childEdits];
    expect(new Set(all).size).toBe(all.length);
    for (const id of result.created) {
      expect(before.has(id)).toBe(false);
      expect((await api(sim, `/api/applications/${id}/tasks/`)).status).toBe(200);
    }
    for (const id of result.updated)
      expect(obj((await api(sim, `/api/applications/${id}/`)).body)['updated_at']).not.toBe(before.get(id));
    for (const id of result.deleted) expect((await api(sim, `/api/applications/${id}/`)).status).toBe(404);
    for (const id of result.childEdits)
      expect(obj((await api(sim, `/api/applications/${id}/`)).body)['updated_at']).toBe(before.get(id));
    // Over HTTP as well.
    const res = await fetch(`${sim.url}/_sim/changes`, { method: 'POST', body: JSON.stringify({ updated: 1 }) });
    expect(((await res.json()) as { updated: number[] }).updated).toHaveLength(1);
  });

  it('counts requests per template and per concrete path; /_sim/data serves collections', async () => {
    sim.control.resetCounts();
    const [a, b] = sim.control.data.applications.rows.map((r) => r['id'] as number);
    await api(sim, `/api/applications/${String(a)}/tasks/`);
    await api(sim, `/api/applications/${String(b)}/tasks/`);
    const counts = sim.control.counts();
    expect(counts.byTemplate['GET /api/applications/{id}/tasks/']).toBe(2);
    expect(counts.byPath[`GET /api/applications/${String(a)}/tasks/`]).toBe(1);
    const http = (await (await fetch(`${sim.url}/_sim/counts`)).json()) as { total: number };
    expect(http.total).toBe(2);
    const tasks = (await (
      await fetch(`${sim.url}/_sim/data/application_tasks?application=${String(a)}`)
    ).json()) as unknown[];
    expect(tasks.length).toBeGreaterThan(0);
    const apps = (await (await fetch(`${sim.url}/_sim/data/applications`)).json()) as unknown[];
    expect(apps.length).toBe(sim.control.data.applications.size);
  });
});
