import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CellValue, Row } from '../../src/normalize/table-def.ts';

import { loadModels, orderModels, runModels, type ModelDef } from '../../src/models/index.ts';

import type { Dialect } from '../../src/warehouse/index.ts';

import { loadSmallSite, openTestWarehouse, type Dataset, type TestWarehouse } from '../support/model-fixtures.ts';
import { tables } from '../../src/streams/registry.ts';

const live = (rows: Row[] | undefined): Row[] =>
  (rows ?? []).filter((r) => r._deleted_at === null || r._deleted_at === undefined);
const cents = (v: CellValue | undefined): number => Math.round(Number(v ?? 0) * 100);
const money = (c: number): string => `${Math.trunc(c / 100)}.${String(Math.abs(c) % 100).padStart(2, '0')}`;
const byKey = (rows: Record<string, CellValue>[], ...keys: string[]): Map<string, Record<string, CellValue>> =>
  new Map(rows.map((r) => [keys.map((k) => String(r[k])).join('/'), r]));

function expectedAwardRates(d: Dataset) {
  const apps = live(d.applications).filter((a) => a.state !== 4);
  const appProgram = new Map(apps.map((a) => [Number(a.id), Number(a.program_id)]));
  return live(d.programs).map((p) => {
    const pid = Number(p.id);
    const awards = live(d.awards).filter((w) => appProgram.get(Number(w.application_id)) === pid);
    const awarded = awards.filter((w) => w.decision === 0);
    const declined = awards.filter((w) => w.decision === 1).length;
    return {
      program_id: pid,
      applications: apps.filter((a) => a.program_id === pid).length,
      awarded: awarded.length,
      declined,
      award_rate: awarded.length + declined === 0 ? null : awarded.length / (awarded.length + declined),
      awarded_value: money(awarded.reduce((s, w) => s + cents(w.value), 0)),
    };
  });
}

describe.each<Dialect>(['duckdb', 'postgres'])('models on %s', (dialect) => {
  let t: TestWarehouse;
  let data: Dataset;
  beforeAll(async () => {
    t = await openTestWarehouse(dialect, 'models');
    data = await loadSmallSite(t.warehouse);
    await runModels(t.warehouse);
  });
  afterAll(async () => t?.cleanup());
  const q = (sql: string) => t.warehouse.query(sql);

  it('award_rates: one row per live program, rates and values from the input rows', async () => {
    const rows = await q('SELECT * FROM award_rates ORDER BY program_id');
    const expected = expectedAwardRates(data);
    expect(rows.map((r) => r.program_id)).toEqual(expected.map((e) => e.program_id));
    for (const e of expected) {
      const r = rows.find((x) => x.program_id === e.program_id);
      expect(r).toMatchObject({
        applications: e.applications,
        awarded: e.awarded,
        declined: e.declined,
        awarded_value: e.awarded_value,
      });
      if (e.award_rate === null) expect(r?.award_rate).toBeNull();
      else expect(Number(r?.award_rate)).toBeCloseTo(e.award_rate, 6);
    }
    // Edge cases the data was built for: program 3 has no applications, program 2 only declines, program 4 is deleted.
    expect(rows.find((r) => r.program_id === 3)).toMatchObject({
      applications: 0,
      award_rate: null,
      awarded_value: '0.00',
    });
    expect(Number(rows.find((r) => r.program_id === 2)?.award_rate)).toBe(0);
    expect(rows.some((r) => r.program_id === 4)).toBe(false);
  });

  it('reviewer_load: assignments per reviewer, program and stage, with names and shares', async () => {
    const rows = await q('SELECT * FROM reviewer_load');
    const counts = new Map<string, number>();
    for (const a of live(data.assignments)) {
      const k = `${a.reviewer_id}/${a.program_id}/${a.stage_id}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    const got = byKey(rows, 'reviewer_id', 'program_id', 'stage_id');
    expect(new Set(got.keys())).toEqual(new Set(counts.keys()));
    for (const [k, n] of counts) {
      const r = got.get(k);
      const [reviewer, program, stage] = k.split('/');
      const stageTotal = [...counts]
        .filter(([kk]) => kk.endsWith(`/${program}/${stage}`))
        .reduce((s, [, v]) => s + v, 0);
      expect(r?.assigned).toBe(n);
      expect(r?.stage_assigned).toBe(stageTotal);
      expect(Number(r?.stage_share)).toBeCloseTo(n / stageTotal, 6);
      expect(r?.reviewer_name).toBe(`First${reviewer} Last${reviewer}`);
      expect(r?.reviewer_email).toBe(`u${reviewer}@example.org`);
    }
  });

  it('funding_flow: transfers against budgets, reconciled where they agree', async () => {
    const rows = await q('SELECT * FROM funding_flow');
    const got = byKey(rows, 'fund_id', 'program_id');
    const transfers = live(data.financial_transactions).filter((x) => x.transaction_type === 2);
    for (const b of live(data.budgets)) {
      const sent = transfers.filter((x) => x.source_fund_id === b.fund_id && x.destination_program_id === b.program_id);
      const r = got.get(`${b.fund_id}/${b.program_id}`);
      expect(r).toMatchObject({
        transferred: money(sent.reduce((s, x) => s + cents(x.amount), 0)),
        transfers: sent.length,
        budget: b.budget,
        allocated: b.allocated,
        paid: b.paid,
        balance: b.balance,
        reconciled: true,
      });
    }
    expect(rows).toHaveLength(live(data.budgets).length);
  });

  it('funding_flow flags a budget that disagrees with its transfers', async () => {
    await t.warehouse.exec(`UPDATE budgets SET budget = budget + 1 WHERE id = 50`);
    try {
      await runModels(t.warehouse, { only: ['funding_flow'] });
      const [r] = await q('SELECT reconciled FROM funding_flow WHERE fund_id = 1 AND program_id = 1');
      expect(r?.reconciled).toBe(false);
    } finally {
      await t.warehouse.exec(`UPDATE budgets SET budget = budget - 1 WHERE id = 50`);
      await runModels(t.warehouse, { only: ['funding_flow'] });
    }
  });

  it('application_funnel, review_progress, decision_latency and fund_utilization agree with the input rows', async () => {
    const apps = live(data.applications).filter((a) => a.state !== 4);
    const program = new Map(apps.map((a) => [Number(a.id), Number(a.program_id)]));
    const records = live(data.application_stages).filter((s) => program.has(Number(s.application_id)));
    const funnel = byKey(await q('SELECT * FROM application_funnel'), 'program_id', 'stage_id');
    const progress = byKey(await q('SELECT * FROM review_progress'), 'program_id', 'stage_id');
    const pairs = new Set(records.map((s) => `${program.get(Number(s.application_id))}/${s.stage_id}`));
    expect(new Set(progress.keys())).toEqual(pairs);
    for (const k of pairs) {
      const mine = records.filter((s) => `${program.get(Number(s.application_id))}/${s.stage_id}` === k);
      const sum = (c: string): number => mine.reduce((s, r) => s + Number(r[c] ?? 0), 0);
      expect(funnel.get(k)).toMatchObject({
        entered: mine.length,
        submitted: mine.filter((s) => s.state === 0).length,
        reopened: mine.filter((s) => s.state === 1).length,
        current_applications: apps.filter((a) => `${a.program_id}/${a.current_stage_id}` === k).length,
      });
      expect(progress.get(k)).toMatchObject({
        applications: mine.length,
        reviews_assigned: sum('reviews_assigned'),
        reviews_completed: sum('reviews_completed'),
      });
    }
    // The first stage of each program has no conversion; the second converts from the first.
    const p1 = [...funnel.values()]
      .filter((r) => r.program_id === 1)
      .sort((a, b) => Number(a.stage_order) - Number(b.stage_order));
    expect(p1[0]?.conversion_rate).toBeNull();
    // The share of the first stage's applications that entered the second too.
    const inStage = (r: (typeof p1)[number] | undefined) =>
      new Set(
        live(data.application_stages)
          .filter((s) => s.stage_id === r?.stage_id)
          .map((s) => s.application_id),
      );
    const [first, second] = [inStage(p1[0]), inStage(p1[1])];
    expect(Number(p1[1]?.conversion_rate)).toBeCloseTo([...first].filter((a) => second.has(a)).length / first.size, 6);

    const latency = byKey(await q('SELECT * FROM decision_latency'), 'program_id');
    for (const p of live(data.programs)) {
      const days = live(data.awards)
        .map((w) => ({ w, a: apps.find((a) => a.id === w.application_id) }))
        .filter(({ w, a }) => a !== undefined && a.program_id === p.id && a.last_submitted_at && w.awarded_at)
        .map(({ w, a }) => (Date.parse(String(w.awarded_at)) - Date.parse(String(a?.last_submitted_at))) / 86_400_000)
        .sort((x, y) => x - y);
      const r = latency.get(String(p.id));
      expect(r?.decisions).toBe(days.length);
      if (days.length === 0) {
        expect(r?.median_days).toBeNull();
        continue;
      }
      const pct = (f: number): number => {
        const pos = f * (days.length - 1);
        const lo = Math.floor(pos);
        return (days[lo] ?? 0) + ((days[Math.ceil(pos)] ?? 0) - (days[lo] ?? 0)) * (pos - lo);
      };
      expect(Number(r?.median_days)).toBeCloseTo(pct(0.5), 3);
      expect(Number(r?.p90_days)).toBeCloseTo(pct(0.9), 3);
    }

    const util = await q('SELECT * FROM fund_utilization ORDER BY fund_id');
    // A fund known only from references has no balance: neither reconciled nor not.
    expect(util.map((r) => r.reconciled)).toEqual(live(data.funds).map((f) => (f._ref_only ? null : true)));
    for (const r of util) if (r.reconciled !== null) expect(r.balance_from_transactions).toBe(r.balance);
    const cents = (v: unknown): number => Math.round(Number(v) * 100);
    for (const r of util) {
      const txns = live(data.financial_transactions).filter((t) => t.transaction_type === 2);
      const into = txns.filter((t) => t.destination_fund_id === r.fund_id).reduce((s, t) => s + cents(t.amount), 0);
      const out = txns.filter((t) => t.source_fund_id === r.fund_id).reduce((s, t) => s + cents(t.amount), 0);
      expect([cents(r.received), cents(r.transferred)], `fund ${String(r.fund_id)}`).toEqual([into, out]);
    }
    expect(util.some((r) => cents(r.received) > 0)).toBe(true);
  });

  it('views of current rows hold exactly the rows of their table not soft-deleted', async () => {
    let deleted = 0;
    for (const table of tables.filter((x) => ['entity', 'dimension', 'bridge'].includes(x.kind))) {
      const key = table.primaryKey.length > 0 ? table.primaryKey.join(', ') : '_raw';
      const base = await q(`SELECT ${key} FROM ${table.name} WHERE _deleted_at IS NULL ORDER BY ${key}`);
      const view = await q(`SELECT ${key} FROM ${table.name}_current ORDER BY ${key}`);
      expect(view, table.name).toEqual(base);
      const [gone] = await q(`SELECT count(*) AS n FROM ${table.name} WHERE _deleted_at IS NOT NULL`);
      deleted += Number(gone?.n);
    }
    // The fixture soft-deletes rows, so a view that did not filter would differ.
    expect(deleted).toBeGreaterThan(0);
  });

  it('builds every model in the analytics schema, none in the schema of the core tables', async () => {
    const names = loadModels().map((m) => m.name);
    expect(t.warehouse.analyticsSchema).toBe(dialect === 'duckdb' ? 'analytics' : `${t.schema}_analytics`);
    expect([...(await t.warehouse.modelTables()).keys()].sort()).toEqual([...names].sort());
    const core = await t.warehouse.schemaTables();
    expect(names.filter((n) => core.has(n))).toEqual([]);
    expect(core.has('applications')).toBe(true);
  });

  it('a model table an older version left in the core schema goes on the next run, so nothing is left twice', async () => {
    const w = t.warehouse;
    const count = async (): Promise<number> => Number((await q('SELECT count(*) AS n FROM award_rates'))[0]?.n);
    const expected = await count();
    // Both copies: the old one (other rows, other columns) is dropped.
    await w.exec(`CREATE TABLE ${w.qualify('award_rates')} AS SELECT 1 AS stale`);
    // Only the old one, with the model's columns: on Postgres it moves, and a view an analyst built on it follows.
    await w.exec(`CREATE TABLE ${w.qualify('reviewer_load')} AS SELECT * FROM ${w.qualifyModel('reviewer_load')}`);
    await w.exec(`DROP TABLE ${w.qualifyModel('reviewer_load')}`);
    await w.exec(`CREATE VIEW ${w.qualify('my_load')} AS SELECT reviewer_id FROM ${w.qualify('reviewer_load')}`);
    const load = Number((await q(`SELECT count(*) AS n FROM ${w.qualify('my_load')}`))[0]?.n);
    for (let run = 0; run < 2; run++) {
      await runModels(w, { only: ['award_rates', 'reviewer_load'] });
      const core = await w.schemaTables();
      expect([core.has('award_rates'), core.has('reviewer_load')], `run ${run}`).toEqual([false, false]);
      const built = await w.modelTables();
      expect([built.has('award_rates'), built.has('reviewer_load')], `run ${run}`).toEqual([true, true]);
      expect(await count()).toBe(expected);
    }
    if (dialect === 'postgres')
      expect(Number((await q(`SELECT count(*) AS n FROM ${w.qualify('my_load')}`))[0]?.n)).toBe(load);
    await w.exec(`DROP VIEW ${w.qualify('my_load')}`);
  });

  it('declares every model column with the type it produces', async () => {
    for (const m of loadModels()) {
      const described = await q(
        `SELECT column_name, data_type, numeric_precision, numeric_scale FROM information_schema.columns
          WHERE table_schema = '${t.warehouse.analyticsSchema}' AND table_name = '${m.name}' ORDER BY ordinal_position`,
      );
      expect(
        described.map((c) => c.column_name),
        m.name,
      ).toEqual(m.columns.map((c) => c.name));
      described.forEach((c, i) => {
        const declared = m.columns[i]?.sqlType ?? '';
        const dec = /^DECIMAL\((\d+),(\d+)\)$/.exec(declared);
        if (dec)
          expect([c.numeric_precision, c.numeric_scale], `${m.name}.${String(c.column_name)}`).toEqual([
            Number(dec[1]),
            Number(dec[2]),
          ]);
        else
          expect(String(c.data_type).toUpperCase(), `${m.name}.${String(c.column_name)}`).toMatch(
            declared === 'VARCHAR'
              ? /VARCHAR|TEXT/
              : declared === 'TIMESTAMPTZ'
                ? /^TIMESTAMP WITH TIME ZONE$|^TIMESTAMPTZ$/
                : new RegExp(declared),
          );
      });
    }
  });
});

describe('model ordering', () => {
  const m = (name: string, dependsOn: string[]): ModelDef => ({
    name,
    description: '',
    sql: { duckdb: '', postgres: '' },
    dependsOn,
    includes: [],
    columns: [],
    file: name,
  });
  it('puts dependencies first and rejects cycles', () => {
    expect(orderModels([m('c', ['b']), m('b', ['a']), m('a', [])]).map((x) => x.name)).toEqual(['a', 'b', 'c']);
    expect(() => orderModels([m('a', ['b']), m('b', ['a'])])).toThrow(/cycle: a -> b -> a/);
  });
});

describe('models give identical tables on DuckDB and Postgres', () => {
  it('cell by cell, for every model', async () => {
    const duck = await openTestWarehouse('duckdb', 'same');
    const pgw = await openTestWarehouse('postgres', 'same');
    try {
      for (const w of [duck, pgw]) {
        await loadSmallSite(w.warehouse);
        await runModels(w.warehouse);
      }
      for (const m of loadModels()) {
        const order = m.columns.map((_, i) => String(i + 1)).join(', ');
        const [a, b] = await Promise.all(
          [duck, pgw].map((w) => w.warehouse.query(`SELECT * FROM ${m.name} ORDER BY ${order}`)),
        );
        expect(a?.length, m.name).toBeGreaterThan(0);
        expect(b, m.name).toEqual(a);
      }
    } finally {
      await duck.cleanup();
      await pgw.cleanup();
    }
  });
});
