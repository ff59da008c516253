/**
 * Lists that change while they are read, through a proxy that acts between two page requests: a deletion moves
 * later records onto pages already read, a page can come back twice or a walk end early. None of it may delete a
 * live record or leave a gap that later runs never fill.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { runReplay } from '../../src/pipeline/replay.ts';
import type { StreamInfo } from '../../src/extract/types.ts';
import { dumpWarehouse, proxySite, siteWithWarehouse, summarize, syncWithoutModels } from '../support/harness.ts';

/** The proxy is the same site at another address: a sync that switches between them says so (--site-moved). */
const sameSite = { siteMoved: true };

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function setup(seed: number): Promise<{
  sim: SimulatorHandle;
  dir: string;
  credentials: string;
  warehouse: string;
  query: (sql: string) => Promise<Record<string, unknown>[]>;
  api: (method: string, path: string, body?: unknown) => Promise<number>;
}> {
  const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed });
  cleanup.push(remove);
  const query = async (sql: string): Promise<Record<string, unknown>[]> => {
    const w = await openWarehouse(warehouse, { logger: silentLogger });
    try {
      return await w.query(sql);
    } finally {
      await w.close();
    }
  };
  const api = async (method: string, path: string, body?: unknown): Promise<number> => {
    const token = (JSON.parse(await readFile(credentials, 'utf8')) as { access_token: string }).access_token;
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.status;
  };
  return { sim, dir, credentials, warehouse, query, api };
}

/** A proxy of the site that deletes `victim` through the API just before page 2 of `list` is requested. */
async function deletingBeforePage(
  sim: SimulatorHandle,
  api: (method: string, path: string) => Promise<number>,
  list: string,
  victim: string,
): Promise<{ url: string; fired: () => boolean; close: () => Promise<void> }> {
  let fired = false;
  const proxy = await proxySite(sim.url, async (url) => {
    if (!fired && url.pathname === list && url.searchParams.get('page') === '2') {
      fired = true;
      expect(await api('DELETE', victim)).toBe(204);
    }
  });
  cleanup.push(proxy.close);
  return { ...proxy, fired: () => fired };
}

/** The runs' landed pages replayed in order into a new warehouse: its dump, and the last replay's stream infos. */
async function replayRuns(
  dir: string,
  runIds: readonly string[],
): Promise<{ dump: Record<string, string>; infos: StreamInfo[] }> {
  const target = join(dir, 'replayed.duckdb');
  const warehouse = await openWarehouse(target, { logger: silentLogger });
  let infos: StreamInfo[] = [];
  try {
    for (const runId of runIds)
      infos = await runReplay({ warehouse, rawDir: join(dir, 'raw'), runId, siteTimeZone: 'UTC' });
  } finally {
    await warehouse.close();
  }
  return { dump: summarize(await dumpWarehouse(target)), infos };
}

/** What a replay must reproduce of a sync's stream info. */
const counters = (i: StreamInfo | undefined): unknown => ({
  records: i?.records,
  duplicates: i?.duplicates,
  deleted: i?.deleted,
});

const live = (rows: Record<string, unknown>[]): unknown[] =>
  rows.filter((r) => r.deleted === false || r.deleted === 0).map((r) => Number(r.id));

describe('a deletion while a list is read', () => {
  it('does not soft-delete the live record it moved onto a page already read, nor its children', async () => {
    const { sim, dir, credentials, warehouse, query, api } = await setup(7);
    const perPage = 10;
    const landing = { landRaw: true, rawDir: join(dir, 'raw') };
    const first = await syncWithoutModels(sim, { credentials, warehouse, perPage, ...landing });
    expect(first.status).toBe('succeeded');
    const ids = sim.control.collection('applications').map((a) => Number(a.id));
    const [victim, moved] = [ids[0]!, ids[perPage]!]; // `moved` opens page 2, until the victim goes
    const proxy = await deletingBeforePage(sim, api, '/api/applications/', `/api/applications/${victim}/`);
    const result = await syncWithoutModels(
      { ...sim, url: proxy.url },
      { ...sameSite, credentials, warehouse, perPage, ...landing },
    );
    expect(proxy.fired()).toBe(true);
    expect(result.status).toBe('succeeded');
    // A replay of the landed pages (both walks) loads the same tables and counts the same.
    const replay = await replayRuns(dir, [first.runId, result.runId]);
    expect(replay.dump).toEqual(summarize(await dumpWarehouse(warehouse)));
    const stream = (infos: readonly StreamInfo[]): StreamInfo | undefined =>
      infos.find((i) => i.stream === 'applications');
    expect(counters(stream(replay.infos))).toEqual(counters(stream(result.streams)));
    const rows = await query(
      `SELECT id, _deleted_at IS NOT NULL AS deleted FROM applications WHERE id IN (${victim}, ${moved})`,
    );
    expect(live(rows)).toContain(moved);
    const [tasks] = await query(
      `SELECT count(_deleted_at) AS gone FROM application_tasks WHERE application_id = ${moved}`,
    );
    expect(Number(tasks!.gone)).toBe(0);

    // Read once more with nothing moving: the victim, read before it went, is deleted now; the moved one lives.
    await proxy.close();
    expect((await syncWithoutModels(sim, { ...sameSite, credentials, warehouse, perPage })).status).toBe('succeeded');
    const after = await query(
      `SELECT id, _deleted_at IS NOT NULL AS deleted FROM applications WHERE id IN (${victim}, ${moved})`,
    );
    expect(live(after)).toEqual([moved]);
  });

  it('a later page gone because the list shrank ends the walk (kept, nothing deleted) instead of failing it', async () => {
    const { sim, dir, credentials, warehouse, query, api } = await setup(8);
    const landing = { landRaw: true, rawDir: join(dir, 'raw') };
    const first = await syncWithoutModels(sim, { credentials, warehouse, ...landing });
    expect(first.status).toBe('succeeded');
    const ids = sim.control.collection('applications').map((a) => Number(a.id));
    // Page 2 holds one record until a deletion: then the site answers it with 404 (Django's "Invalid page.").
    const perPage = ids.length - 1;
    const [victim, moved] = [ids[0]!, ids[perPage]!];
    const proxy = await deletingBeforePage(sim, api, '/api/applications/', `/api/applications/${victim}/`);
    const result = await syncWithoutModels(
      { ...sim, url: proxy.url },
      { ...sameSite, credentials, warehouse, perPage, ...landing },
    );
    expect(proxy.fired()).toBe(true);
    expect(result.status).toBe('succeeded');
    const info = result.streams.find((i) => i.stream === 'applications');
    expect(info).toMatchObject({ status: 'ok', complete: false, deleted: 0 });
    const all = `SELECT id, _deleted_at IS NOT NULL AS deleted FROM applications ORDER BY id`;
    expect(live(await query(all))).toEqual(ids);
    const replay = await replayRuns(dir, [first.runId, result.runId]);
    expect(replay.dump).toEqual(summarize(await dumpWarehouse(warehouse)));

    // Read whole with nothing moving: only the victim goes.
    await proxy.close();
    expect((await syncWithoutModels(sim, { ...sameSite, credentials, warehouse, perPage })).status).toBe('succeeded');
    expect(live(await query(all))).toEqual(ids.filter((id) => id !== victim));
    expect(live(await query(all))).toContain(moved);
  });

  it('does not soft-delete a live child that moved within its parent list', async () => {
    const { sim, dir, credentials, warehouse, query, api } = await setup(7);
    const perPage = 2;
    const landing = { landRaw: true, rawDir: join(dir, 'raw') };
    const app = Number(sim.control.collection('applications')[5]!.id);
    for (let i = 0; i < 3; i++)
      expect(await api('POST', `/api/applications/${app}/notes/`, { content: `n${i}`, is_private: false })).toBe(201);
    const notes = (): number[] =>
      sim.control.collection('application_notes', { application: app }).map((n) => Number(n.id));
    const before = notes();
    expect(before.length).toBeGreaterThan(perPage + 1);
    const first = await syncWithoutModels(sim, { credentials, warehouse, perPage, ...landing });
    expect(first.status).toBe('succeeded');
    expect(await api('PATCH', `/api/applications/${app}/`, { title: 'touched' })).toBe(200); // its notes are read again
    const notesList = `/api/applications/${app}/notes/`;
    const proxy = await deletingBeforePage(sim, api, notesList, `${notesList}${before[0]}/`);
    const result = await syncWithoutModels(
      { ...sim, url: proxy.url },
      { ...sameSite, credentials, warehouse, perPage, ...landing },
    );
    expect(result.status).toBe('succeeded');
    expect(proxy.fired()).toBe(true);
    const rows = await query(
      `SELECT id, _deleted_at IS NOT NULL AS deleted FROM application_notes WHERE application_id = ${app}`,
    );
    for (const id of notes()) expect(live(rows), `note ${id}`).toContain(id);
    const replay = await replayRuns(dir, [first.runId, result.runId]);
    expect(replay.dump).toEqual(summarize(await dumpWarehouse(warehouse)));
    const stream = (infos: readonly StreamInfo[]): StreamInfo | undefined =>
      infos.find((i) => i.stream === 'application_notes');
    expect(counters(stream(replay.infos))).toEqual(counters(stream(result.streams)));
  });

  it('a parent that goes before its second walk only keeps its children (the stream does not fail)', async () => {
    const { sim, credentials, warehouse, query, api } = await setup(8);
    const perPage = 2;
    const app = Number(sim.control.collection('applications')[5]!.id);
    for (let i = 0; i < 3; i++)
      expect(await api('POST', `/api/applications/${app}/notes/`, { content: `n${i}`, is_private: false })).toBe(201);
    const before = sim.control.collection('application_notes', { application: app }).map((n) => Number(n.id));
    expect((await syncWithoutModels(sim, { ...sameSite, credentials, warehouse, perPage })).status).toBe('succeeded');
    expect(await api('PATCH', `/api/applications/${app}/`, { title: 'touched' })).toBe(200);
    expect(await api('DELETE', `/api/applications/${app}/notes/${before[1]}/`)).toBe(204); // a second walk is due
    let walks = 0;
    const proxy = await proxySite(sim.url, async (url) => {
      if (url.pathname !== `/api/applications/${app}/notes/` || url.searchParams.has('page')) return;
      // The second walk's first page: the application is deleted just before it.
      if (++walks === 2) expect(await api('DELETE', `/api/applications/${app}/`)).toBe(204);
    });
    cleanup.push(proxy.close);
    const result = await syncWithoutModels(
      { ...sim, url: proxy.url },
      { ...sameSite, credentials, warehouse, perPage },
    );
    expect(walks).toBe(2);
    expect(result.streams.find((s) => s.stream === 'application_notes')?.status).toBe('ok');
    const [kept] = await query(
      `SELECT count(*) AS n FROM application_notes WHERE application_id = ${app} AND _deleted_at IS NULL`,
    );
    expect(Number(kept!.n)).toBe(before.length); // nothing of it deleted by the unconfirmed walk
  });
});

describe('a walk that is not what it seems', () => {
  it('a list ending short of its count deletes nothing', async () => {
    const { sim, credentials, warehouse, query } = await setup(11);
    const perPage = 10;
    expect((await syncWithoutModels(sim, { ...sameSite, credentials, warehouse, perPage })).status).toBe('succeeded');
    const proxy = await proxySite(
      sim.url,
      () => undefined,
      (url, body) => {
        if (url.pathname !== '/api/applications/' || url.searchParams.get('page') !== '2') return body;
        return JSON.stringify({ ...(JSON.parse(body) as object), next: null });
      },
    );
    cleanup.push(proxy.close);
    const result = await syncWithoutModels(
      { ...sim, url: proxy.url },
      { ...sameSite, credentials, warehouse, perPage },
    );
    const apps = result.streams.find((s) => s.stream === 'applications');
    expect(apps).toMatchObject({ complete: false, deleted: 0 });
    expect(apps?.countMismatch?.read).toBeLessThan(apps?.countMismatch?.reported ?? 0);
    const [n] = await query('SELECT count(*) AS n FROM applications WHERE _deleted_at IS NULL AND NOT _ref_only');
    expect(Number(n!.n)).toBe(sim.control.collection('applications').length);
  });

  it('an append-only list whose page came back twice is filled in by the next run', async () => {
    const { sim, credentials, warehouse, query } = await setup(12);
    const perPage = 10;
    expect((await syncWithoutModels(sim, { ...sameSite, credentials, warehouse, perPage })).status).toBe('succeeded');
    sim.control.applyChanges({ updated: 30 }); // 30 new activity items, newest first
    let first = '';
    const proxy = await proxySite(
      sim.url,
      () => undefined,
      (url, body) => {
        if (url.pathname !== '/api/activity/') return body;
        const page = url.searchParams.get('page') ?? '1';
        if (page === '1') first = body;
        if (page !== '2') return body;
        // Page 2 answers page 1's items again, its link to page 3 intact.
        const answer = JSON.parse(body) as { results: unknown };
        return JSON.stringify({ ...answer, results: (JSON.parse(first) as { results: unknown }).results });
      },
    );
    cleanup.push(proxy.close);
    expect(
      (await syncWithoutModels({ ...sim, url: proxy.url }, { ...sameSite, credentials, warehouse, perPage })).status,
    ).toBe('succeeded');
    const [gap] = await query('SELECT count(*) AS n FROM activity');
    expect(Number(gap!.n)).toBeLessThan(sim.control.collection('activity').length);
    await proxy.close();
    expect((await syncWithoutModels(sim, { ...sameSite, credentials, warehouse, perPage })).status).toBe('succeeded');
    const [filled] = await query('SELECT count(*) AS n FROM activity');
    expect(Number(filled!.n)).toBe(sim.control.collection('activity').length);
  });
});
