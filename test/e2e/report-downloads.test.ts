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
import { postgresSchema, siteWithWarehouse, syncOnce } from './harness.ts';

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
});
