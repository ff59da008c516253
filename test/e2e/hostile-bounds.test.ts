/**
 * Issue 44: a hostile or broken site cannot take a run down. A list under way stops at the time budget and resumes
 * where it stopped; a `next` chain bounded by the stream's time limit; a record nested thousands of levels deep is
 * quarantined; a report column headed `__proto__` keeps its cells. Each on DuckDB and Postgres, in process.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { SettingsInput } from '../../src/config/settings.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { postgresSchema, siteWithWarehouse, syncOnce } from '../support/harness.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

interface Target {
  readonly warehouse: string;
  readonly schema?: string;
}

const targets: { name: string; make: (dir: string) => Promise<Target> }[] = [
  { name: 'DuckDB', make: (dir) => Promise.resolve({ warehouse: join(dir, `w${Math.random()}.duckdb`) }) },
  {
    name: 'Postgres',
    make: async () => {
      const pg = await postgresSchema();
      cleanup.push(pg.drop);
      return { warehouse: pg.url, schema: pg.schema };
    },
  },
];

async function query(target: Target, sql: string): Promise<Record<string, unknown>[]> {
  const w = await openWarehouse(target.warehouse, { schema: target.schema, logger: silentLogger });
  try {
    return await w.query(sql);
  } finally {
    await w.close();
  }
}

async function site(options: Parameters<typeof siteWithWarehouse>[0]) {
  const s = await siteWithWarehouse(options);
  cleanup.push(s.remove);
  return s;
}

const sync = (sim: SimulatorHandle, credentials: string, target: Target, settings: SettingsInput = {}) =>
  syncOnce(sim, {
    credentials,
    warehouse: target.warehouse,
    ...(target.schema ? { schema: target.schema } : {}),
    models: false,
    ...settings,
  });

/** Requests of the applications list this sync made that began at its first page (no `page`, or page 1). */
function firstPageRequests(sim: SimulatorHandle): string[] {
  return Object.keys(sim.control.counts().byRequest).filter(
    (r) => r.startsWith('GET /api/applications/?') && !/[?&]page=(?!1\b)\d+/.test(r),
  );
}

describe.each(targets)('$name', ({ make }) => {
  it('a top-level list under way at the time budget commits what it read; the next run continues from that page', async () => {
    // 1,000 applications in pages of 10, each page 100 ms late: 10 s, far longer than the budget.
    const { sim, dir, credentials } = await site({ scale: 'small', seed: 44, perPageMax: 10, latency: { ms: 100 } });
    const target = await make(dir);
    const streams = ['applications'];
    // The warehouse made first, so the budget goes to reading the list.
    expect((await sync(sim, credentials, target, { streams: ['programs'] })).status).toBe('succeeded');
    const first = await sync(sim, credentials, target, { streams, maxDuration: '3s', detectPageSize: false });
    expect(first.status).toBe('paused');
    const cut = first.streams.find((s) => s.stream === 'applications')!;
    expect(cut.status).toBe('interrupted');
    const total = sim.control.data.applications.rows.length;
    expect(cut.records).toBeGreaterThan(0);
    expect(cut.records).toBeLessThan(total);
    const [held] = await query(target, 'SELECT count(*) AS n FROM applications WHERE _deleted_at IS NULL');
    expect(Number(held!.n)).toBe(cut.records);

    sim.control.setLatency({ ms: 0 });
    sim.control.resetCounts();
    const second = await sync(sim, credentials, target, { streams, detectPageSize: false });
    expect(second.resumed).toBe(true);
    expect(second.status).toBe('succeeded');
    // It began where the first stopped: no request of the list's first page.
    expect(firstPageRequests(sim)).toEqual([]);
    const resumed = second.streams.find((s) => s.stream === 'applications')!;
    // A walk that did not begin at the first page is no complete scan: it deletes nothing.
    expect(resumed).toMatchObject({ complete: false, deleted: 0 });
    const [all] = await query(target, 'SELECT count(*) AS n FROM applications WHERE _deleted_at IS NULL');
    expect(Number(all!.n)).toBe(total);

    // The next walk starts over at the first page and, complete, may delete again.
    sim.control.resetCounts();
    const third = await sync(sim, credentials, target, { streams, detectPageSize: false });
    expect(firstPageRequests(sim).length).toBeGreaterThan(0);
    expect(third.streams.find((s) => s.stream === 'applications')?.complete).toBe(true);
  }, 120_000);

  it('an endless next chain announcing 10^9 records stops at the stream time limit: committed, failed, exit 1', async () => {
    const { sim, dir, credentials } = await site({
      scale: 'tiny',
      seed: 45,
      hostile: { endless: { template: '/api/applications/', count: 1e9 } },
    });
    const target = await make(dir);
    const result = await sync(sim, credentials, target, { streams: ['applications'], maxStreamDuration: '1500ms' });
    expect(result.status).toBe('partial');
    expect(result.exitCode).toBe(1);
    const apps = result.streams.find((s) => s.stream === 'applications')!;
    expect(apps.status).toBe('failed');
    expect(apps.reason).toMatch(/--max-stream-duration/);
    const [held] = await query(target, 'SELECT count(*) AS n FROM applications');
    expect(Number(held!.n)).toBe(apps.records);
    expect(apps.records).toBeGreaterThan(0);
  }, 60_000);

  it('a record nested 6,000 levels deep is quarantined with its reason; the stream goes on', async () => {
    const { sim, dir, credentials } = await site({
      scale: 'tiny',
      seed: 46,
      hostile: { deepRecord: { template: '/api/applications/', depth: 6000 } },
    });
    const target = await make(dir);
    const result = await sync(sim, credentials, target, { streams: ['application_tasks'] });
    expect(result.status).toBe('succeeded');
    const apps = result.streams.find((s) => s.stream === 'applications')!;
    expect(apps).toMatchObject({ status: 'ok', quarantined: 1 });
    expect(apps.records).toBe(sim.control.data.applications.rows.length + 1);
    const rows = await query(target, "SELECT reason FROM _grantflow_quarantine WHERE stream = 'applications'");
    expect(rows.map((r) => String(r.reason))).toEqual([expect.stringMatching(/nests more than 200 levels deep/)]);
  }, 60_000);

  it('a report column headed __proto__ keeps its cells', async () => {
    const { sim, dir, credentials } = await site({ scale: 'tiny', seed: 47, hostile: { protoColumn: true } });
    const target = await make(dir);
    const result = await sync(sim, credentials, target, { streams: ['report_downloads'] });
    expect(result.status).toBe('succeeded');
    const rows = await query(target, 'SELECT row_number, data FROM report_rows ORDER BY report_id, row_number');
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const data = JSON.parse(String(r.data)) as Record<string, unknown>;
      expect(Object.getOwnPropertyDescriptor(data, '__proto__')?.value).toBe(`proto ${Number(r.row_number)}`);
    }
  }, 60_000);
});
