/**
 * Issue 26: the files of the site's generated reports land as report_columns and report_rows, equal to what the
 * site serves (unicode, quotes and embedded newlines included), downloaded again only when a report is generated
 * again; other report states are listed, not downloaded.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { readRawLines } from '../../src/extract/raw-landing.ts';
import { formatSummary } from '../../src/pipeline/summary.ts';
import { runReplay } from '../../src/pipeline/replay.ts';
import { postgresSchema, siteWithWarehouse, syncOnce } from '../support/harness.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const download = 'GET /api/reports/{id}/download/';

interface Target {
  readonly warehouse: string;
  readonly schema?: string;
}

const targets: { name: string; make: (dir: string) => Promise<Target> }[] = [
  { name: 'DuckDB', make: (dir) => Promise.resolve({ warehouse: join(dir, 'w.duckdb') }) },
  {
    name: 'Postgres',
    make: async () => {
      const pg = await postgresSchema();
      cleanup.push(pg.drop);
      return { warehouse: pg.url, schema: pg.schema };
    },
  },
];

/** What the warehouse holds of each report's file: headers and rows (live), by report id. */
async function landedFiles(
  target: Target,
): Promise<Map<number, { header: string[]; variables: (string | null)[]; rows: Record<string, string>[] }>> {
  const w = await openWarehouse(target.warehouse, { schema: target.schema, logger: silentLogger });
  try {
    const files = new Map<number, { header: string[]; variables: (string | null)[]; rows: Record<string, string>[] }>();
    const file = (id: number) => {
      let f = files.get(id);
      if (!f) files.set(id, (f = { header: [], variables: [], rows: [] }));
      return f;
    };
    for (const c of await w.query(
      'SELECT report_id, header, variable FROM report_columns WHERE _deleted_at IS NULL ORDER BY report_id, position',
    )) {
      file(Number(c.report_id)).header.push(String(c.header));
      file(Number(c.report_id)).variables.push(c.variable === null ? null : String(c.variable));
    }
    for (const r of await w.query(
      'SELECT report_id, data FROM report_rows WHERE _deleted_at IS NULL ORDER BY report_id, row_number',
    ))
      file(Number(r.report_id)).rows.push(JSON.parse(String(r.data)) as Record<string, string>);
    return files;
  } finally {
    await w.close();
  }
}

/** The simulator's generated reports, as the rows the CSV was written from (keyed by header). */
function servedFiles(
  sim: SimulatorHandle,
): Map<number, { header: string[]; variables: string[]; rows: Record<string, string>[] }> {
  const out = new Map<number, { header: string[]; variables: string[]; rows: Record<string, string>[] }>();
  for (const report of sim.control.collection('reports')) {
    const served = sim.control.reportFile(Number(report.id));
    if (!served) continue;
    const header = [...served.table.header];
    out.set(Number(report.id), {
      header,
      variables: (report.columns as string[]).slice(),
      rows: served.table.rows.map((cells) => Object.fromEntries(cells.map((v, i) => [header[i]!, v]))),
    });
  }
  return out;
}

describe.each(targets)('report downloads into $name', ({ make }) => {
  it('land every generated report equal to its file, and a second sync downloads nothing', async () => {
    const { sim, dir, credentials, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 3 });
    cleanup.push(remove);
    const target = await make(dir);
    const generated = sim.control.collection('reports').filter((r) => r.status === 3);
    expect(generated.length).toBeGreaterThan(1);
    expect(sim.control.collection('reports').length).toBeGreaterThan(generated.length);

    const first = await syncOnce(sim, { credentials, ...target, models: true });
    expect(first.status).toBe('succeeded');
    const counts = sim.control.counts();
    expect(counts.byTemplate[download]).toBe(generated.length);
    for (const r of generated) expect(counts.byPath[`GET /api/reports/${String(r.id)}/download/`]).toBe(1);

    const served = servedFiles(sim);
    const landed = await landedFiles(target);
    expect([...landed.keys()].sort()).toEqual([...served.keys()].sort());
    for (const [id, file] of served) {
      const got = landed.get(id)!;
      expect(got.header, `report ${id}`).toEqual(file.header);
      expect(got.variables, `report ${id}`).toEqual(file.variables);
      expect(got.rows.length, `report ${id}`).toBe(file.rows.length);
      expect(got.rows, `report ${id}`).toEqual(file.rows);
    }
    // The files carry what breaks naive readers, so the equality above covers it.
    const cells = [...served.values()].flatMap((f) => f.rows.flatMap((r) => Object.values(r)));
    expect(cells.some((c) => c.includes('\n'))).toBe(true);
    expect(cells.some((c) => c.includes('"'))).toBe(true);
    expect(cells.some((c) => /[^ -~\s]/.test(c))).toBe(true);
    const info = first.streams.find((s) => s.stream === 'report_downloads')!;
    expect(info.parents).toMatchObject({
      fetched: generated.length,
      idle: sim.control.collection('reports').length - generated.length,
    });

    sim.control.resetCounts();
    const second = await syncOnce(sim, { credentials, ...target });
    expect(second.status).toBe('succeeded');
    expect(sim.control.counts().byTemplate[download]).toBeUndefined();
    expect(second.streams.find((s) => s.stream === 'report_downloads')?.parents?.unchanged).toBe(generated.length);
    expect(await landedFiles(target)).toEqual(landed);
  });

  it('with refreshReports, creates report jobs, polls them within the rate limit and lands the new files', async () => {
    const { sim, dir, credentials, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 3, rate: 5 });
    cleanup.push(remove);
    const target = await make(dir);
    const streams = ['reports', 'report_downloads'];
    const first = await syncOnce(sim, { credentials, ...target, streams, rate: 5 });
    expect(first.status).toBe('succeeded');
    const before = await landedFiles(target);
    const reports = sim.control.collection('reports');
    const regenerated = reports.find((r) => r.status === 3)!;
    const never = reports.find((r) => r.status === 0 && r.last_generated_at === '')!;
    expect(before.has(Number(never.id))).toBe(false);
    const stampBefore = String(regenerated.last_generated_at);

    sim.control.resetCounts();
    const chosen = [Number(regenerated.id), Number(never.id)];
    const second = await syncOnce(sim, {
      credentials,
      ...target,
      streams,
      rate: 5,
      refreshReports: chosen.map(String),
    });
    expect(second.status).toBe('succeeded');
    const counts = sim.control.counts();
    expect(counts.byTemplate['POST /api/reportjobs/']).toBe(2);
    // A job is queued, then generating, then generated: two polls each at least.
    expect(counts.byTemplate['GET /api/reportstatuses/']).toBeGreaterThanOrEqual(4);
    expect(counts.byStatus['429']).toBeUndefined();
    expect(second.client.rateLimited).toBe(0);
    // Only the two new generations are downloaded; the other generated report is unchanged.
    expect(counts.byTemplate[download]).toBe(2);
    for (const id of chosen) expect(counts.byPath[`GET /api/reports/${id}/download/`]).toBe(1);
    const reportsInfo = second.streams.find((s) => s.stream === 'reports')!;
    expect(reportsInfo.reportJobs).toMatchObject({ requested: 2, jobsCreated: 2, generated: 2, notGenerated: [] });

    const regeneratedNow = sim.control.collection('reports').find((r) => r.id === regenerated.id)!;
    expect(regeneratedNow.last_generated_at).not.toBe(stampBefore);
    const served = servedFiles(sim);
    const landed = await landedFiles(target);
    for (const id of chosen) expect(landed.get(id)?.rows, `report ${id}`).toEqual(served.get(id)?.rows);
    expect(landed.get(Number(regenerated.id))?.rows).not.toEqual(before.get(Number(regenerated.id))?.rows);

    const w = await openWarehouse(target.warehouse, { schema: target.schema, logger: silentLogger });
    try {
      const rows = await w.query(
        'SELECT DISTINCT last_generated_at FROM report_rows WHERE report_id = $1 AND _deleted_at IS NULL',
        [Number(regenerated.id)],
      );
      expect(rows.map((r) => new Date(String(r.last_generated_at)).toISOString())).toEqual([
        new Date(String(regeneratedNow.last_generated_at)).toISOString(),
      ]);
    } finally {
      await w.close();
    }
  });

  it('says when a download is not CSV, loads no rows for it and keeps the file in the raw landing', async () => {
    const { sim, dir, credentials, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 3 });
    cleanup.push(remove);
    const target = await make(dir);
    const [csvReport, xlsxReport] = sim.control.collection('reports').filter((r) => r.status === 3);
    const xlsx = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.from([0, 0xff, 0x80, 7, 0, 1])]);
    sim.control.setReportFile(Number(xlsxReport!.id), {
      contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      body: xlsx,
    });
    const rawDir = join(dir, 'raw');
    const result = await syncOnce(sim, {
      credentials,
      ...target,
      streams: ['reports', 'report_downloads'],
      landRaw: true,
      rawDir,
    });
    expect(result.status).toBe('succeeded');
    const info = result.streams.find((s) => s.stream === 'report_downloads')!;
    expect(info.otherFormat).toBe(1);
    const summary = formatSummary({ ...result, extra: [] });
    expect(summary).toMatch(/WARNING: 1 report files were not CSV/);

    const landed = await landedFiles(target);
    expect(landed.has(Number(xlsxReport!.id))).toBe(false);
    expect(landed.get(Number(csvReport!.id))?.rows).toEqual(servedFiles(sim).get(Number(csvReport!.id))?.rows);

    const kept: Buffer[] = [];
    for await (const line of readRawLines(join(rawDir, result.runId), 'report_downloads'))
      if (line.type === 'page' && line.parentId === Number(xlsxReport!.id) && line.file)
        kept.push(Buffer.from(line.body, line.file.encoding));
    expect(kept).toEqual([xlsx]);

    // A replay of the landed files loads the same rows into a fresh warehouse.
    const fresh = join(dir, 'replayed.duckdb');
    const w = await openWarehouse(fresh, { logger: silentLogger });
    try {
      await runReplay({ warehouse: w, rawDir, runId: result.runId, siteTimeZone: 'UTC' });
    } finally {
      await w.close();
    }
    expect(await landedFiles({ warehouse: fresh })).toEqual(landed);
  });
});

describe('report downloads on a flaky site', () => {
  it('retry 5xx answers and dropped connections like any request, and land the same rows', async () => {
    const { sim, dir, credentials, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 3 });
    cleanup.push(remove);
    sim.control.setFaults({ rate: 0.4, kinds: ['5xx', 'reset'], seed: 11 });
    const target = { warehouse: join(dir, 'w.duckdb') };
    const result = await syncOnce(sim, { credentials, ...target, streams: ['reports', 'report_downloads'] });
    expect(result.status).toBe('succeeded');
    expect(result.client.retries).toBeGreaterThan(0);
    const downloads = sim.control.counts().byTemplate[download] ?? 0;
    const generated = [...servedFiles(sim).keys()];
    // Some download attempts failed and were made again.
    expect(downloads).toBeGreaterThan(generated.length);
    const landed = await landedFiles(target);
    for (const [id, file] of servedFiles(sim)) expect(landed.get(id)?.rows, `report ${id}`).toEqual(file.rows);
  });
});
