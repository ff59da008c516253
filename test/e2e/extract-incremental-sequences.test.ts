/**
 * Sequences of site changes and syncs (failures, stream subsets, full refreshes) that must leave the warehouse
 * equal to a fresh full sync of the site.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { settingsSchema } from '../../src/config/settings.ts';

import { runSync, SyncStoppedError } from '../../src/pipeline/sync.ts';

import { StoppedError } from '../../src/util/errors.ts';

import { silentLogger } from '../../src/util/logger.ts';

import {
  dumpWarehouse,
  proxySite,
  referenceDump,
  siteWithWarehouse,
  syncOnce,
  type TableDump,
} from '../support/harness.ts';
import { tables } from '../../src/streams/registry.ts';

/** The proxy is the same site at another address: a sync that switches between them says so (--site-moved). */
const sameSite = { siteMoved: true };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** Live (not soft-deleted) rows of every table, without the `_deleted` flag: what a fresh full sync must give. */
function live(dump: Record<string, TableDump>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const rows = dump[t.name]?.content ?? [];
    if (rows.length > 0 && !('_deleted' in rows[0]!)) {
      out[t.name] = rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
      continue;
    }
    out[t.name] = rows
      .filter((r) => r._deleted !== true)
      .map((r) => {
        const { _deleted: _d, ...rest } = r;
        return JSON.stringify(rest, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
      });
  }
  return out;
}

/** Tables whose live rows differ between a warehouse and a fresh full sync of the same site. */
async function differingTables(warehouse: string, reference: Record<string, TableDump>): Promise<string[]> {
  const got = live(await dumpWarehouse(warehouse));
  const want = live(reference);
  return tables
    .map((t) => t.name)
    .filter((name) => JSON.stringify(got[name]) !== JSON.stringify(want[name]))
    .sort();
}

describe('incremental sequences', () => {
  // The walk named here answers a `next` link to another origin, so its stream fails: the tasks of the first
  // application (the tasks stream fails), or the application list itself (no fan-out stream runs).
  it.each([
    ['its fan-out stream fails', (first: number) => `/api/applications/${first}/tasks/`],
    ['the parent stream fails', () => '/api/applications/'],
  ])('a --full-refresh where %s is finished by the next plain sync', async (_case, brokenPath) => {
    const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 21 });
    cleanup.push(remove);
    expect((await syncOnce(sim, { models: false, credentials, warehouse })).status).toBe('succeeded');
    // Task data and notes edited without the applications' updated_at moving: only a full refresh sees them.
    const edited = sim.control.applyChanges({ childEdits: 12 }).childEdits;
    expect(edited.length).toBe(12);

    const first = Math.min(...sim.control.collection('applications').map((a) => Number(a.id)));
    const proxy = await proxySite(
      sim.url,
      () => undefined,
      (url, body) => {
        if (url.pathname !== brokenPath(first)) return body;
        return JSON.stringify({ ...(JSON.parse(body) as object), next: 'http://elsewhere.invalid/x' });
      },
    );
    cleanup.push(proxy.close);
    const broken = await syncOnce(sim, {
      ...sameSite,
      models: false,
      credentials,
      warehouse,
      site: proxy.url,
      fullRefresh: true,
    });
    expect(broken.status).toBe('partial');
    expect(broken.streams.find((s) => s.stream === 'application_tasks')?.status).toBe('failed');

    const next = await syncOnce(sim, { ...sameSite, models: false, credentials, warehouse });
    expect(next.status).toBe('succeeded');
    expect(next.streams.find((s) => s.stream === 'application_tasks')?.fullRefresh).toBe(true);
    const reference = await referenceDump(sim, dir, 'reference', { models: false });
    expect(await differingTables(warehouse, reference)).toEqual([]);
  });
});

describe('a --full-refresh stopped halfway', () => {
  it('is finished by a plain sync after a resume that selected other streams', async () => {
    const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 26 });
    cleanup.push(remove);
    expect((await syncOnce(sim, { models: false, credentials, warehouse })).status).toBe('succeeded');
    expect(sim.control.applyChanges({ childEdits: 12 }).childEdits.length).toBe(12);

    // Stopped (as by SIGTERM) at the 5th per-application tasks walk of a --full-refresh.
    const stop = new AbortController();
    let walks = 0;
    const proxy = await proxySite(sim.url, (url) => {
      if (/^\/api\/applications\/\d+\/tasks\/$/.test(url.pathname) && ++walks === 5)
        stop.abort(new StoppedError('interrupted by SIGTERM'));
    });
    cleanup.push(proxy.close);
    const stopped = runSync({
      settings: settingsSchema.parse({
        site: proxy.url,
        credentials,
        warehouse,
        rate: 1000,
        snapshot: false,
        landRaw: false,
        models: false,
        logLevel: 'silent',
        fullRefresh: true,
        ...sameSite,
      }),
      logger: silentLogger,
      env: {},
      tty: false,
      signal: stop.signal,
    });
    await expect(stopped).rejects.toBeInstanceOf(SyncStoppedError);

    // The next sync resumes that run but selects only the programs: the resumed run ends without the tasks.
    const resumed = await syncOnce(sim, { ...sameSite, models: false, credentials, warehouse, streams: ['programs'] });
    expect(resumed.resumed).toBe(true);
    expect(resumed.status).toBe('succeeded');

    const next = await syncOnce(sim, { ...sameSite, models: false, credentials, warehouse });
    expect(next.streams.find((s) => s.stream === 'application_tasks')?.fullRefresh).toBe(true);
    const reference = await referenceDump(sim, dir, 'reference', { models: false });
    expect(await differingTables(warehouse, reference)).toEqual([]);
  });
});

describe('a parent that leaves the list and comes back unchanged', () => {
  it.each([
    ['a plain sync', {}],
    ['a sync of the parent stream only', { streams: ['applications'] }],
    ['a sync whose fan-out streams fail', { failChildren: true }],
  ] as const)('gets its children back after %s', async (_case, how) => {
    const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 22 });
    cleanup.push(remove);
    expect((await syncOnce(sim, { models: false, credentials, warehouse })).status).toBe('succeeded');
    // Trashed, then restored as it was (the site keeps its children and its updated_at): it leaves the list a while.
    const ds = sim.control.data;
    const victim = Number(sim.control.collection('applications')[5]!.id);
    expect(sim.control.collection('application_tasks', { application: victim }).length).toBeGreaterThan(0);
    const app = ds.applications.remove(victim)!;
    ds.version++;

    let site = sim.url;
    if ('failChildren' in how) {
      // Every per-application walk answers a `next` link to another origin: the three fan-out streams fail.
      const proxy = await proxySite(
        sim.url,
        () => undefined,
        (url, body) =>
          /^\/api\/applications\/\d+\/(stages|tasks|notes)\/$/.test(url.pathname)
            ? JSON.stringify({ ...(JSON.parse(body) as object), next: 'http://elsewhere.invalid/x' })
            : body,
      );
      cleanup.push(proxy.close);
      site = proxy.url;
      // One more application changes, so the fan-out streams have a parent to read (and fail on).
      sim.control.applyChanges({ updated: 1 });
    }
    const gone = await syncOnce(sim, {
      ...sameSite,
      models: false,
      credentials,
      warehouse,
      site,
      ...('streams' in how ? { streams: [...how.streams] } : {}),
    });
    expect(gone.streams.find((s) => s.stream === 'applications')?.deleted).toBeGreaterThan(0);

    ds.applications.insert(app);
    ds.version++;
    expect((await syncOnce(sim, { ...sameSite, models: false, credentials, warehouse })).status).toBe('succeeded');
    const reference = await referenceDump(sim, dir, 'reference', { models: false });
    expect(await differingTables(warehouse, reference)).toEqual([]);
  });
});

describe('a parent edited within the precision of its updated_at', () => {
  it('has its children read again when its record changed though updated_at did not move', async () => {
    const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 25 });
    cleanup.push(remove);
    // A site whose timestamps are too coarse to move between two edits a sync read between (here: they never move).
    const proxy = await proxySite(
      sim.url,
      () => undefined,
      (_url, body) => body.replace(/"updated_at":"[^"]*"/g, '"updated_at":"2024-01-01"'),
    );
    cleanup.push(proxy.close);
    const settings = { models: false, credentials, warehouse, site: proxy.url };
    expect((await syncOnce(sim, settings)).status).toBe('succeeded');

    const id = Number(sim.control.collection('applications')[3]!.id);
    const call = (method: string, path: string, body: unknown) =>
      fetch(`${sim.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${sim.credentials.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((res) => res.status);
    expect(await call('POST', `/api/applications/${id}/notes/`, { content: 'added with the edit' })).toBe(201);
    expect(await call('PATCH', `/api/applications/${id}/`, { title: 'Edited' })).toBe(200);
    expect((await syncOnce(sim, settings)).status).toBe('succeeded');

    const reference = await referenceDump(sim, dir, 'reference', { models: false, site: proxy.url });
    expect(await differingTables(warehouse, reference)).toEqual([]);
  });
});
