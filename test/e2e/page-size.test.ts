/**
 * Page size detection: the spec does not say how large a page a site serves, so a sync asks once for pages of 500,
 * reads lists with what the site honours and keeps it in the warehouse; a site that caps pages gets its cap, one that
 * refuses large pages the configured size, with no stream failing.
 */
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SimulatorHandle } from '../../src/simulator/index.ts';

import { silentLogger } from '../../src/util/logger.ts';

import { openWarehouse } from '../../src/warehouse/index.ts';

import { dumpWarehouse, postgresSchema, startSite, summarize, syncOnce, tempDir } from '../support/harness.ts';

import { writeCredentials } from '../support/harness.ts';
import { streamCatalog } from '../../src/streams/registry.ts';

const probe = 'GET /api/applications/?per_page=500';
const topLevel = streamCatalog.filter((s) => !s.parent).map((s) => s.name);

let dir: Awaited<ReturnType<typeof tempDir>>;
const sites: SimulatorHandle[] = [];
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  for (const sim of sites) await sim.close();
  await dir.remove();
});

async function site(options: Parameters<typeof startSite>[0]): Promise<{ sim: SimulatorHandle; credentials: string }> {
  const sim = await startSite(options);
  sites.push(sim);
  return { sim, credentials: await writeCredentials(sim, join(dir.path, `creds-${sites.length}.json`)) };
}

/** The check of the site every sync makes before it writes (preflight): no page of a list. */
const preflight = 'GET /api/programs/?per_page=1';

/** GET requests per top-level list (no parent id in the path), from the simulator's own counts. */
function listRequests(sim: SimulatorHandle): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [request, n] of Object.entries(sim.control.counts().byRequest)) {
    const list = /^GET \/api\/[a-z-]+\/(?=\?|$)/.exec(request)?.[0];
    if (list && request !== preflight) out[list] = (out[list] ?? 0) + n;
  }
  return out;
}

async function applicationsState(target: string, schema?: string): Promise<Record<string, unknown>> {
  const w = await openWarehouse(target, { schema, logger: silentLogger });
  try {
    return (await w.readState('applications')) as Record<string, unknown>;
  } finally {
    await w.close();
  }
}

describe('page size detection', () => {
  it('with a site honouring 500: every list in a fifth of the pages, the same rows', async () => {
    const { sim, credentials } = await site({ scale: 'small', seed: 5, perPageMax: 500 });
    const plain = join(dir.path, 'plain.duckdb');
    sim.control.resetCounts();
    expect(
      (await syncOnce(sim, { credentials, warehouse: plain, streams: topLevel, detectPageSize: false })).status,
    ).toBe('succeeded');
    const byDefault = listRequests(sim);
    const detected = join(dir.path, 'detected.duckdb');
    sim.control.resetCounts();
    const result = await syncOnce(sim, { credentials, warehouse: detected, streams: topLevel });
    expect(result.status).toBe('succeeded');
    // The probe, and the walk's first page, which is the same request.
    expect(sim.control.counts().byRequest[probe]).toBe(2);
    // Pages of 100 by default: ceil(n / 500) = ceil(ceil(n / 100) / 5) pages of 500, and the one probe.
    const expected = Object.fromEntries(
      Object.entries(byDefault).map(([t, n]) => [t, Math.ceil(n / 5) + (t === 'GET /api/applications/' ? 1 : 0)]),
    );
    expect(listRequests(sim)).toEqual(expected);
    // The large lists (applications, the logs) in a fifth of the requests; each list at least its one page.
    const large = Object.entries(byDefault).filter(([, n]) => n >= 5);
    expect(large.length).toBeGreaterThan(1);
    for (const [t, n] of large) expect(listRequests(sim)[t], t).toBeLessThanOrEqual(n / 5 + 1.5);
    expect(summarize(await dumpWarehouse(detected))).toEqual(summarize(await dumpWarehouse(plain)));
    expect(await applicationsState(detected)).toMatchObject({ pageSize: 500, pageSizeFound: 'honoured' });

    // Kept: the next run asks no more.
    sim.control.resetCounts();
    expect((await syncOnce(sim, { credentials, warehouse: detected, streams: ['applications'] })).status).toBe(
      'succeeded',
    );
    expect(sim.control.counts().byRequest[probe]).toBe(1);
    expect(listRequests(sim)['GET /api/applications/']).toBe(expected['GET /api/applications/']! - 1);
  });

  it('with a site capping pages in silence: its cap', async () => {
    const { sim, credentials } = await site({ scale: 'small', seed: 5, perPageMax: 200 });
    const warehouse = join(dir.path, 'capped.duckdb');
    expect((await syncOnce(sim, { credentials, warehouse, streams: ['applications'] })).status).toBe('succeeded');
    expect(await applicationsState(warehouse)).toMatchObject({ pageSize: 200, pageSizeFound: 'capped' });
    const applications = sim.control.collection('applications').length;
    expect(listRequests(sim)['GET /api/applications/']).toBe(1 + Math.ceil(applications / 200));
  });

  it('with a site refusing large pages (400): the configured size, no stream failing; Postgres', async () => {
    const { sim, credentials } = await site({ scale: 'tiny', seed: 5, perPageMax: 100, perPageOverMax: 'reject' });
    const pg = await postgresSchema();
    try {
      const result = await syncOnce(sim, { credentials, warehouse: pg.url, schema: pg.schema, models: false });
      expect(result.status).toBe('succeeded');
      expect(result.streams.filter((s) => s.status === 'failed')).toEqual([]);
      const counts = sim.control.counts();
      expect(counts.byRequest[probe]).toBe(1);
      expect(counts.byStatus['400']).toBe(1);
      expect(await applicationsState(pg.url, pg.schema)).toMatchObject({ pageSize: 100, pageSizeFound: 'rejected' });
      sim.control.resetCounts();
      expect((await syncOnce(sim, { credentials, warehouse: pg.url, schema: pg.schema, models: false })).status).toBe(
        'succeeded',
      );
      expect(sim.control.counts().byStatus['400']).toBeUndefined();
    } finally {
      await pg.drop();
    }
  });
});
