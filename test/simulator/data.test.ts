import { describe, expect, it } from 'vitest';
import { generateDataset, type Dataset } from '../../src/simulator/index.ts';
import type { JsonObject, JsonValue } from '../../src/util/json.ts';

const cents = (v: JsonValue | undefined): number => Math.round(Number(v) * 100);
const id = (v: JsonValue | undefined): number => (v as JsonObject)['id'] as number;
const parseMoney = (s: JsonValue | undefined): number => Math.round(Number(String(s).replace(/[$,]/g, '')) * 100);
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

function checkIdentities(ds: Dataset): void {
  const txns = ds.transactions.rows;
  for (const fund of ds.funds.rows) {
    const f = fund['id'];
    const deposits = sum(
      txns.filter((t) => t['transaction_type'] === 0 && id(t['destination']) === f).map((t) => cents(t['amount'])),
    );
    const withdrawals = sum(
      txns.filter((t) => t['transaction_type'] === 1 && id(t['source']) === f).map((t) => cents(t['amount'])),
    );
    const transfers = sum(
      txns.filter((t) => t['transaction_type'] === 2 && id(t['source']) === f).map((t) => cents(t['amount'])),
    );
    expect(cents(fund['total'])).toBe(deposits);
    expect(cents(fund['available_to_programs'])).toBe(transfers);
    expect(cents(fund['balance'])).toBe(deposits - withdrawals - transfers);
    const budgets = ds.budgets.rows.filter((b) => id(b['fund']) === f);
    expect(cents(fund['allocated'])).toBe(sum(budgets.map((b) => cents(b['allocated']))));
    expect(cents(fund['paid'])).toBe(sum(budgets.map((b) => cents(b['paid']))));
  }
  for (const b of ds.budgets.rows) {
    const transfers = txns.filter(
      (t) =>
        t['transaction_type'] === 2 && id(t['source']) === id(b['fund']) && id(t['destination']) === id(b['program']),
    );
    expect(cents(b['budget'])).toBe(sum(transfers.map((t) => cents(t['amount']))));
    const payments = txns.filter(
      (t) => t['transaction_type'] === 3 && (t['source'] as JsonObject)['budget_id'] === b['id'],
    );
    expect(cents(b['paid'])).toBe(sum(payments.map((t) => cents(t['amount']))));
    expect(cents(b['balance'])).toBe(cents(b['budget']) - cents(b['paid']));
    expect(cents(b['allocated'])).toBeLessThanOrEqual(cents(b['budget']));
  }
  for (const p of ds.programs.rows) {
    const budgets = ds.budgets.rows.filter((b) => id(b['program']) === p['id']);
    for (const [pk, bk] of [
      ['total', 'budget'],
      ['allocated', 'allocated'],
      ['paid', 'paid'],
      ['balance', 'balance'],
    ] as const) {
      expect(cents(p[pk])).toBe(sum(budgets.map((b) => cents(b[bk]))));
    }
    expect((p['funding_sources'] as JsonObject[]).map((s) => s['id'])).toEqual(budgets.map((b) => b['id']));
    const awarded = ds.awards.rows.filter((a) => a['decision'] === 0 && id(a['program']) === p['id']);
    expect(p['awards_made']).toBe(awarded.length);
    expect(cents(p['allocated'])).toBe(sum(awarded.map((a) => cents(a['value']))));
  }
  for (const award of ds.awards.rows) {
    const app = ds.applications.get(id(award['application']));
    expect(app?.['decision']).toEqual({ id: award['id'], decision: award['decision'], awarded: award['awarded'] });
    expect(parseMoney(award['awarded'])).toBe(cents(award['value']));
    expect(String(award['awarded'])).toMatch(/^\$\d{1,3}(,\d{3})*\.\d{2}$/);
    const payments = ds.payments.rows.filter((pay) => id(pay['decision']) === award['id']);
    expect(award['payments']).toEqual(
      payments.map((pay) => ({ id: pay['id'], amount: pay['amount'], status: pay['status'] })),
    );
    expect(sum(payments.map((pay) => cents(pay['amount'])))).toBeLessThanOrEqual(cents(award['value']));
  }
  for (const pay of ds.payments.rows) {
    const sources = pay['sources'] as JsonObject[];
    expect(cents(pay['amount'])).toBe(sum(sources.map((s) => cents(s['amount']))));
    for (const s of sources) {
      const t = ds.transactions.get(s['id'] as number);
      expect(t?.['transaction_type']).toBe(3);
      expect(id(t?.['payment'])).toBe(pay['id']);
      expect(t?.['transaction_id']).toBe(s['transaction_id']);
    }
  }
  const appsWithDecision = ds.applications.rows.filter((a) => a['decision'] !== null);
  expect(appsWithDecision.length).toBe(ds.awards.size);
}

describe('generated data', () => {
  it('reconciles exactly (cents) at small scale', () => {
    checkIdentities(generateDataset({ scale: 'small', seed: 42 }));
  });

  it('reconciles at tiny scale for several seeds', () => {
    for (const seed of [1, 2, 3]) checkIdentities(generateDataset({ scale: 'tiny', seed }));
  });

  it('transaction shapes follow spec 2.9', () => {
    const ds = generateDataset({ scale: 'tiny', seed: 5 });
    for (const t of ds.transactions.rows) {
      if (t['transaction_type'] === 0) expect([t['source'], t['source_type']]).toEqual([null, 0]);
      if (t['transaction_type'] === 1) expect([t['destination'], t['destination_type']]).toEqual([null, 0]);
      if (t['transaction_type'] === 2) {
        expect(Object.keys(t['source'] as JsonObject).sort()).toEqual(['id', 'name']);
        expect(t['destination']).toHaveProperty('funding_sources');
      }
    }
  });

  it('is deterministic in the seed, and lazily generated children do not depend on read order', () => {
    const a = generateDataset({ scale: 'tiny', seed: 9 });
    const b = generateDataset({ scale: 'tiny', seed: 9 });
    expect(JSON.stringify(a.applications.rows)).toBe(JSON.stringify(b.applications.rows));
    expect(JSON.stringify(a.transactions.rows)).toBe(JSON.stringify(b.transactions.rows));
    const last = a.applications.maxId();
    expect(JSON.stringify(a.children(last))).toBe(JSON.stringify(b.children(last)));
    expect(JSON.stringify(a.children(1))).toBe(JSON.stringify(b.children(1)));
    expect(JSON.stringify(generateDataset({ scale: 'tiny', seed: 10 }).applications.rows)).not.toBe(
      JSON.stringify(a.applications.rows),
    );
  });

  it('a user id always carries the same name and email', () => {
    const ds = generateDataset({ scale: 'small', seed: 4 });
    const seen = new Map<number, string>();
    const visit = (v: JsonValue): void => {
      if (Array.isArray(v)) return v.forEach(visit);
      if (v === null || typeof v !== 'object') return;
      if ('email' in v && 'first_name' in v && typeof v['id'] === 'number' && !('is_admin' in v)) {
        const key = `${String(v['first_name'])}|${String(v['last_name'])}|${String(v['email'])}`;
        expect(seen.get(v['id']) ?? key).toBe(key);
        seen.set(v['id'], key);
      }
      Object.values(v).forEach(visit);
    };
    for (const rows of [
      ds.applications.rows,
      ds.awards.rows,
      ds.activity.rows,
      ds.payments.rows,
      ds.organizations.rows,
      ds.assignments,
    ])
      visit(rows);
    for (let appId = 1; appId <= 50; appId++) visit(ds.children(appId)?.notes ?? []);
    expect(seen.size).toBeGreaterThan(100);
  });

  it('carries the awkward values real data has', () => {
    const ds = generateDataset({ scale: 'small', seed: 42 });
    const all = JSON.stringify([ds.applications.rows, ds.organizations.rows, ds.programs.rows]);
    expect(all).toContain("'; DROP TABLE applications; --");
    expect(all).toMatch(/🚀|🌍/u);
    expect(all).toContain("O'Brien");
    expect(ds.applications.rows.some((a) => a['organization'] === null)).toBe(true);
    const stamps = ds.applications.rows.map((a) => String(a['created_at']));
    expect(stamps.some((s) => s.endsWith('Z') && !s.includes('.'))).toBe(true);
    expect(stamps.some((s) => s.endsWith('+02:00'))).toBe(true);
    expect(stamps.some((s) => /\.\d+Z$/.test(s))).toBe(true);
    expect(stamps.some((s) => /T\d\d:\d\d:\d\d$/.test(s))).toBe(true);
    const first = ds.children(ds.applications.rows[0]?.['id'] as number);
    expect(Math.max(...(first?.notes ?? []).map((n) => String(n['content']).length))).toBeGreaterThan(90_000);
    const data = ds.applications.rows
      .slice(0, 100)
      .flatMap((a) => (ds.children(a['id'] as number)?.tasks ?? []).map((t) => t['data'] as JsonObject));
    const values = data.flatMap((d) => Object.values(d));
    expect(values.some((v) => typeof v === 'string')).toBe(true);
    expect(values.some((v) => typeof v === 'number')).toBe(true);
    expect(values.some((v) => Array.isArray(v))).toBe(true);
    expect(values.some((v) => v !== null && typeof v === 'object' && !Array.isArray(v) && 'other' in v)).toBe(true);
    // Notes and activity have ids; task ids are task definition ids (unique within an application).
    expect(ds.activity.rows.every((a) => typeof a['id'] === 'number')).toBe(true);
  });

  it('sizes scale as named', () => {
    expect(generateDataset({ scale: 'tiny' }).applications.size).toBe(50);
    expect(generateDataset({ scale: 'small' }).applications.size).toBe(1000);
  });
});
