/**
 * Issue 5 acceptance, on DuckDB and on Postgres: simulator → sync → models → data tests → snapshots. The three named
 * models equal what this test computes on its own from the simulator's data, to the cent; the Parquet files read
 * back with hyparquet (not the DuckDB that wrote them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { readFile } from 'node:fs/promises';

import { join } from 'node:path';

import { parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';

import { compressors } from 'hyparquet-compressors';

import type { SimulatorHandle } from '../../src/simulator/index.ts';

import type { JsonObject } from '../../src/util/json.ts';

import type { SyncResult } from '../../src/pipeline/sync.ts';

import type { CellValue } from '../../src/normalize/table-def.ts';

import { openWarehouse } from '../../src/warehouse/index.ts';

import { enums } from '../../src/normalize/index.ts';
import { silentLogger } from '../../src/util/logger.ts';

import { postgresSchema, startSite, syncOnce, tempDir, writeCredentials } from '../support/harness.ts';
import { tables } from '../../src/streams/registry.ts';
import { loadModels } from '../../src/models/index.ts';
import { isRatio } from '../../src/models/generic-tests.ts';

/** Money as integer cents, from a number or a decimal string, without binary floating point. */
function cents(value: unknown): number {
  const text = typeof value === 'number' ? value.toFixed(2) : String(value);
  const m = /^(-?)(\d+)(?:\.(\d{1,2}))?\d*$/.exec(text.trim());
  if (!m) throw new Error(`not money: ${text}`);
  return (m[1] ? -1 : 1) * (Number(m[2]) * 100 + Number((m[3] ?? '0').padEnd(2, '0')));
}
const idOf = (r: JsonObject, field: string): number => Number((r[field] as JsonObject | null)?.id);
/** A site timestamp in milliseconds: one without a zone is UTC (the sync's default site time zone); blank is null. */
function siteMs(value: unknown): number | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  return Date.parse(/(?:Z|[+-]\d\d:\d\d)$/.test(value) ? value : `${value}Z`);
}
/** Continuous percentile of sorted numbers (as percentile_cont). */
function percentile(sorted: readonly number[], p: number): number {
  const pos = p * (sorted.length - 1);
  const lo = sorted[Math.floor(pos)]!;
  return lo + (sorted[Math.ceil(pos)]! - lo) * (pos - Math.floor(pos));
}

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let pgTarget: Awaited<ReturnType<typeof postgresSchema>>;
const targets: Record<string, { warehouse: string; schema?: string; snapshots: string; result?: SyncResult }> = {};

beforeAll(async () => {
  sim = await startSite({ scale: 'small', seed: 23 });
  dir = await tempDir();
  pgTarget = await postgresSchema();
  targets.duckdb = { warehouse: join(dir.path, 'w.duckdb'), snapshots: join(dir.path, 'snap-duck') };
  targets.postgres = { warehouse: pgTarget.url, schema: pgTarget.schema, snapshots: join(dir.path, 'snap-pg') };
  const credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  for (const t of Object.values(targets)) {
    t.result = await syncOnce(sim, {
      credentials,
      warehouse: t.warehouse,
      schema: t.schema,
      snapshots: t.snapshots,
      snapshot: true,
      models: true,
    });
  }
}, 240_000);
afterAll(async () => {
  await sim.close();
  await pgTarget.drop();
  await dir.remove();
});

async function modelRows(target: string, sql: string): Promise<Record<string, CellValue>[]> {
  const t = targets[target]!;
  const warehouse = await openWarehouse(t.warehouse, { schema: t.schema, logger: silentLogger });
  try {
    return await warehouse.query(sql);
  } finally {
    await warehouse.close();
  }
}

describe.each(['duckdb', 'postgres'])('the whole pipeline on %s', (target) => {
  it('succeeds, with models built and every error-level data test passing', () => {
    const result = targets[target]!.result!;
    expect(result.status).toBe('succeeded');
    expect(result.after?.failed).toBe(false);
    expect(result.after?.lines.join('\n')).toMatch(/data tests: \d+ passed, 0 failed/);
  });

  it('award_rates equals the rates computed from the simulator, to the cent', async () => {
    const apps = sim.control.collection('applications');
    const awards = sim.control.collection('awards');
    const expected = sim.control.collection('programs').map((p) => {
      const ids = new Set(apps.filter((a) => idOf(a, 'program') === p.id && a.state !== 4).map((a) => Number(a.id)));
      const mine = awards.filter((w) => ids.has(idOf(w, 'application')));
      const awarded = mine.filter((w) => w.decision === 0);
      const declined = mine.filter((w) => w.decision === 1).length;
      return {
        program_id: Number(p.id),
        program_name: p.name,
        applications: ids.size,
        awarded: awarded.length,
        declined,
        award_rate: awarded.length + declined === 0 ? null : (awarded.length / (awarded.length + declined)).toFixed(4),
        awarded_value: awarded.reduce((s, w) => s + cents(w.value), 0),
      };
    });
    expect(expected.some((e) => e.awarded > 0 && e.declined > 0)).toBe(true);
    const rows = await modelRows(target, 'SELECT * FROM award_rates ORDER BY program_id');
    const actual = rows.map((r) => ({
      program_id: Number(r.program_id),
      program_name: r.program_name,
      applications: Number(r.applications),
      awarded: Number(r.awarded),
      declined: Number(r.declined),
      award_rate: r.award_rate === null ? null : Number(r.award_rate).toFixed(4),
      awarded_value: cents(r.awarded_value),
    }));
    expect(actual).toEqual(expected.sort((a, b) => a.program_id - b.program_id));
  });

  it('award_rates_by_year equals the decisions of the simulator per program and UTC year, to the cent', async () => {
    const apps = new Map(sim.control.collection('applications').map((a) => [Number(a.id), a]));
    const expected = new Map<string, { decided: number; awarded: number; declined: number; value: number }>();
    for (const w of sim.control.collection('awards')) {
      const a = apps.get(idOf(w, 'application'));
      if (a === undefined || a.state === 4 || (w.decision !== 0 && w.decision !== 1)) continue;
      const at = siteMs(w.awarded_at) ?? siteMs(w.created_at);
      const key = `${idOf(a, 'program')}/${at === null ? null : new Date(at).getUTCFullYear()}`;
      const e = expected.get(key) ?? { decided: 0, awarded: 0, declined: 0, value: 0 };
      e.decided++;
      if (w.decision === 0) {
        e.awarded++;
        e.value += cents(w.value);
      } else e.declined++;
      expected.set(key, e);
    }
    expect(new Set([...expected.keys()].map((k) => k.split('/')[1])).size).toBeGreaterThan(1);
    const rows = await modelRows(target, 'SELECT * FROM award_rates_by_year');
    expect(rows.length).toBe(expected.size);
    for (const r of rows) {
      const key = `${String(r.program_id)}/${String(r.decision_year)}`;
      const e = expected.get(key);
      expect(e, key).toBeDefined();
      expect([Number(r.decided), Number(r.awarded), Number(r.declined)], key).toEqual([
        e!.decided,
        e!.awarded,
        e!.declined,
      ]);
      expect(Number(r.award_rate), key).toBeCloseTo(e!.awarded / e!.decided, 6);
      expect(cents(r.awarded_value), key).toBe(e!.value);
    }
  });

  it('stage_aging equals the days the applications of the simulator have waited in their stage', async () => {
    const rows = await modelRows(target, 'SELECT * FROM stage_aging');
    const asOf = Date.parse(String(rows[0]?.as_of));
    // As of the sync: when it read the applications, after the simulator made them and before now.
    expect(asOf).toBeLessThanOrEqual(Date.now());
    const entered = new Map(
      sim.control
        .collection('application_stages')
        .map((s) => [`${String(s.application_id)}/${idOf(s, 'stage')}`, siteMs(s.created_at)]),
    );
    const groups = new Map<string, { applications: number; days: number[] }>();
    for (const a of sim.control.collection('applications')) {
      const stage = idOf(a, 'current_stage');
      if (a.state === 4 || !(stage > 0)) continue;
      const key = `${idOf(a, 'program')}/${stage}/${String(a.state)}`;
      const g = groups.get(key) ?? { applications: 0, days: [] };
      g.applications++;
      const at = entered.get(`${String(a.id)}/${stage}`);
      if (at !== null && at !== undefined) g.days.push((asOf - at) / 86_400_000);
      groups.set(key, g);
    }
    expect(rows.length).toBe(groups.size);
    expect(rows.some((r) => Number(r.applications) > 1)).toBe(true);
    for (const r of rows) {
      const key = `${String(r.program_id)}/${String(r.stage_id)}/${String(r.state)}`;
      const g = groups.get(key);
      expect(g, key).toBeDefined();
      expect(r.as_of, key).toBe(rows[0]!.as_of);
      expect([Number(r.applications), Number(r.dated)], key).toEqual([g!.applications, g!.days.length]);
      const days = [...g!.days].sort((x, y) => x - y);
      // To the last of 4 decimals (8.6 s): the site's timestamps carry microseconds, a JavaScript date milliseconds.
      expect(Math.abs(Number(r.median_days) - percentile(days, 0.5)), key).toBeLessThanOrEqual(0.0001);
      expect(Math.abs(Number(r.p90_days) - percentile(days, 0.9)), key).toBeLessThanOrEqual(0.0001);
    }
  });

  it('every ratio of the models (*_rate, *_share) is a fraction from 0 to 1', async () => {
    let checked = 0;
    for (const m of loadModels())
      for (const c of m.columns.filter((x) => isRatio(x.name))) {
        const [range] = await modelRows(
          target,
          `SELECT min(${c.name}) AS lo, max(${c.name}) AS hi, count(${c.name}) AS n FROM ${m.name}`,
        );
        expect(Number(range?.n), `${m.name}.${c.name} has values`).toBeGreaterThan(0);
        expect(Number(range?.lo), `${m.name}.${c.name}`).toBeGreaterThanOrEqual(0);
        expect(Number(range?.hi), `${m.name}.${c.name}`).toBeLessThanOrEqual(1);
        checked++;
      }
    expect(checked).toBeGreaterThan(5);
  });

  it('reviewer_load equals the assignment counts of the simulator', async () => {
    const expected = new Map<string, { assigned: number; name: string; email: string }>();
    for (const a of sim.control.collection('assignments')) {
      const reviewer = a.reviewer as JsonObject;
      const key = `${idOf(a, 'reviewer')}/${idOf(a, 'program')}/${idOf(a, 'stage')}`;
      const e = expected.get(key) ?? {
        assigned: 0,
        name: `${String(reviewer.first_name)} ${String(reviewer.last_name)}`,
        email: String(reviewer.email),
      };
      e.assigned++;
      expected.set(key, e);
    }
    const rows = await modelRows(target, 'SELECT * FROM reviewer_load');
    expect(rows.length).toBe(expected.size);
    for (const r of rows) {
      const e = expected.get(`${String(r.reviewer_id)}/${String(r.program_id)}/${String(r.stage_id)}`);
      expect(e, `${String(r.reviewer_id)}/${String(r.program_id)}/${String(r.stage_id)}`).toBeDefined();
      expect(Number(r.assigned)).toBe(e!.assigned);
      expect(r.reviewer_email).toBe(e!.email);
      expect(r.reviewer_name).toBe(e!.name);
    }
  });

  it('funding_flow equals transfers and budgets of the simulator, to the cent, and reconciles', async () => {
    const transfers = new Map<string, number>();
    for (const t of sim.control.collection('financial_transactions')) {
      if (t.transaction_type !== 2) continue;
      const key = `${idOf(t, 'source')}/${idOf(t, 'destination')}`;
      transfers.set(key, (transfers.get(key) ?? 0) + cents(t.amount));
    }
    const budgets = new Map(
      sim.control.collection('budgets').map((b) => [`${idOf(b, 'fund')}/${idOf(b, 'program')}`, b]),
    );
    const keys = new Set([...transfers.keys(), ...budgets.keys()]);
    const rows = await modelRows(target, 'SELECT * FROM funding_flow');
    expect(rows.length).toBe(keys.size);
    for (const r of rows) {
      const key = `${String(r.fund_id)}/${String(r.program_id)}`;
      const b = budgets.get(key);
      expect(cents(r.transferred), key).toBe(transfers.get(key) ?? 0);
      expect(cents(r.allocated), key).toBe(cents(b?.allocated));
      expect(cents(r.paid), key).toBe(cents(b?.paid));
      expect(cents(r.balance), key).toBe(cents(b?.balance));
      expect(r.reconciled, key).toBe(true);
    }
  });

  it('builds the models in the analytics schema only', async () => {
    const t = targets[target]!;
    const analytics = target === 'duckdb' ? 'analytics' : `${t.schema}_analytics`;
    const rows = await modelRows(
      target,
      `SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_name IN ('award_rates', 'fund_utilization', 'funding_flow')
          AND table_schema IN ('${t.schema ?? 'main'}', '${analytics}') ORDER BY table_name, table_schema`,
    );
    expect(rows).toEqual(
      ['award_rates', 'fund_utilization', 'funding_flow'].map((n) => ({ table_schema: analytics, table_name: n })),
    );
    expect((await modelRows(target, `SELECT count(*) AS n FROM ${analytics}.award_rates`))[0]?.n).toBe(
      sim.control.collection('programs').length,
    );
  });

  it("fund_utilization's utilization_rate equals the fund's own utilization (both fractions), fund by fund", async () => {
    // The site sends a percentage; the warehouse and the model hold fractions from 0 to 1.
    const site = new Map(sim.control.collection('funds').map((f) => [Number(f.id), Number(f.utilization) / 100]));
    const rows = await modelRows(
      target,
      `SELECT u.fund_id, u.utilization_rate AS model, f.utilization_rate AS fund
         FROM fund_utilization u JOIN funds f ON f.id = u.fund_id
        WHERE u.utilization_rate IS NOT NULL ORDER BY u.fund_id`,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const fund = `fund ${String(r.fund_id)}`;
      expect(Number(r.model), fund).toBeGreaterThan(0);
      expect(Number(r.model), fund).toBeLessThanOrEqual(1);
      expect(Number(r.model), fund).toBeCloseTo(Number(r.fund), 12);
      expect(Number(r.fund), fund).toBe(site.get(Number(r.fund_id)));
    }
  });

  it('labels join every numeric enum column on (enum, code), without a cast', async () => {
    let joined = 0;
    for (const t of tables) {
      for (const c of t.columns) {
        if (!c.enum || !(c.enum in enums) || (c.type !== 'integer' && c.type !== 'bigint')) continue;
        const labels = enums[c.enum as keyof typeof enums] as Record<string, string>;
        const rows = await modelRows(
          target,
          `SELECT t.${c.name} AS v, l.label FROM ${t.name} t
             LEFT JOIN enum_labels l ON l.enum = '${c.enum}' AND l.code = t.${c.name}
            WHERE t.${c.name} IS NOT NULL`,
        );
        for (const r of rows) expect(r.label, `${t.name}.${c.name} = ${String(r.v)}`).toBe(labels[String(r.v)] ?? null);
        joined += rows.filter((r) => r.label !== null).length;
      }
    }
    expect(joined).toBeGreaterThan(0);
  });

  it('writes Parquet snapshots that hyparquet reads back: row counts and logical types', async () => {
    const { snapshots } = targets[target]!;
    const manifest = JSON.parse(await readFile(join(snapshots, '_manifest.json'), 'utf8')) as {
      tables: Record<string, { path: string; rows: number }>;
    };
    for (const name of ['applications', 'financial_transactions', 'award_rates', 'funding_flow', 'reviewer_load']) {
      expect(manifest.tables[name], name).toBeDefined();
    }
    const counts = await modelRows(target, 'SELECT count(*) AS n FROM applications');
    const snapshotAt = new Set<string>();
    for (const [name, entry] of Object.entries(manifest.tables)) {
      const bytes = await readFile(join(snapshots, entry.path));
      const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      const metadata = await parquetMetadataAsync(file);
      expect(Number(metadata.num_rows), name).toBe(entry.rows);
      if (name === 'applications') expect(entry.rows).toBe(Number(counts[0]!.n));
      // Every file: read whole, with the snapshot's time in every row, no _raw (snapshotRaw is off), and no column
      // typed JSON (whose statistics, cut at 256 bytes, a reader parsing them fails on).
      const schema = parquetSchema(metadata).children.map((c) => c.element);
      expect(
        schema.map((c) => c.name),
        name,
      ).toContain('_snapshot_at');
      expect(
        schema.map((c) => c.name),
        name,
      ).not.toContain('_raw');
      expect(
        schema.filter((c) => c.logical_type?.type === 'JSON' || c.converted_type === 'JSON').map((c) => c.name),
        name,
      ).toEqual([]);
      const rows = await parquetReadObjects({ file, compressors });
      expect(rows.length, name).toBe(entry.rows);
      for (const r of rows) snapshotAt.add((r._snapshot_at as Date).toISOString());
    }
    // One time for the whole snapshot, the one its folder is named after (to the second).
    expect(snapshotAt.size).toBe(1);
    const [at] = [...snapshotAt];
    const folder = manifest.tables.applications!.path.split('/')[1]!;
    expect(folder).toBe(`snapshot=${at!.slice(0, 19).replaceAll(':', '-')}Z`);
    const apps = await readFile(join(snapshots, manifest.tables.applications!.path));
    const file = apps.buffer.slice(apps.byteOffset, apps.byteOffset + apps.byteLength);
    const metadata = await parquetMetadataAsync(file);
    const columns = new Map(parquetSchema(metadata).children.map((c) => [c.element.name, c.element]));
    expect(columns.get('created_at')?.logical_type?.type).toBe('TIMESTAMP');
    const tx = await readFile(join(snapshots, manifest.tables.financial_transactions!.path));
    const txMeta = await parquetMetadataAsync(tx.buffer.slice(tx.byteOffset, tx.byteOffset + tx.byteLength));
    const amount = parquetSchema(txMeta).children.find((c) => c.element.name === 'amount')!.element;
    expect(amount.logical_type).toMatchObject({ type: 'DECIMAL', precision: 18, scale: 2 });
    // Values decompress (zstd) and match the warehouse.
    const rows = await parquetReadObjects({ file, compressors, columns: ['id', 'title', 'created_at'] });
    expect(rows.length).toBe(Number(counts[0]!.n));
    const first = (await modelRows(target, 'SELECT id, title FROM applications ORDER BY id LIMIT 1'))[0]!;
    const fromParquet = rows.find((r) => Number(r.id) === Number(first.id));
    expect(fromParquet?.title).toBe(first.title);
    expect(fromParquet?.created_at).toBeInstanceOf(Date);
  });
});
