/**
 * A site sending an amount grantflow cannot read ("1.250": 1,250 or 1.25?) loads it as NULL (kept in `_raw`). The
 * money models must then say the total is unknown, not show the sum of the other amounts as if it were exact; on
 * DuckDB and on Postgres, after a real sync from the simulator over HTTP. The expected values come from the records
 * the simulator serves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { JsonObject } from '../../src/util/json.ts';
import type { CellValue } from '../../src/normalize/table-def.ts';
import { runDataTests } from '../../src/models/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { postgresSchema, startSite, syncOnce, tempDir, writeCredentials } from '../support/harness.ts';

/** Ambiguous (European thousands or a decimal point): the normaliser gives NULL. */
const UNREADABLE = '1.250';

/** Money as integer cents, or null for the planted unreadable text. */
function cents(value: unknown): number | null {
  if (value === UNREADABLE) return null;
  const text = typeof value === 'number' ? value.toFixed(2) : String(value);
  const m = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!m) throw new Error(`not money: ${text}`);
  return (m[1] ? -1 : 1) * (Number(m[2]) * 100 + Number((m[3] ?? '0').padEnd(2, '0')));
}
/** A sum that is unknown (null) when one of its amounts is. */
const total = (amounts: (number | null)[]): number | null =>
  amounts.some((a) => a === null) ? null : amounts.reduce<number>((s, a) => s + (a ?? 0), 0);
const fromModel = (v: CellValue | undefined): number | null => (v === null || v === undefined ? null : cents(v));
const idOf = (r: JsonObject, field: string): number => Number((r[field] as JsonObject | null)?.id);

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let pgTarget: Awaited<ReturnType<typeof postgresSchema>>;
const targets: Record<string, { warehouse: string; schema?: string }> = {};

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 5 });
  const ds = sim.control.data;
  // One awarded award of a program with others, one fund-to-program transfer and one deposit become unreadable.
  const awarded = ds.awards.rows.filter((w) => w.decision === 0);
  const award = awarded.find((w) => awarded.some((o) => o !== w && idOf(o, 'program') === idOf(w, 'program')));
  const transfer = ds.transactions.rows.find((t) => t.transaction_type === 2 && t.destination_type === 1);
  const deposit = ds.transactions.rows.find((t) => t.transaction_type === 0);
  if (!award || !transfer || !deposit) throw new Error('the tiny site lacks an award, transfer or deposit to plant');
  award.value = UNREADABLE;
  transfer.amount = UNREADABLE;
  deposit.amount = UNREADABLE;
  dir = await tempDir();
  pgTarget = await postgresSchema();
  targets.duckdb = { warehouse: join(dir.path, 'w.duckdb') };
  targets.postgres = { warehouse: pgTarget.url, schema: pgTarget.schema };
  const credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  for (const t of Object.values(targets)) {
    const result = await syncOnce(sim, { credentials, warehouse: t.warehouse, schema: t.schema, models: true });
    expect(result.status).toBe('succeeded');
  }
}, 240_000);
afterAll(async () => {
  await sim?.close();
  await pgTarget?.drop();
  await dir?.remove();
});

async function withWarehouse<T>(
  target: string,
  use: (w: Awaited<ReturnType<typeof openWarehouse>>) => Promise<T>,
): Promise<T> {
  const t = targets[target]!;
  const warehouse = await openWarehouse(t.warehouse, { schema: t.schema, logger: silentLogger });
  try {
    return await use(warehouse);
  } finally {
    await warehouse.close();
  }
}
const rows = (target: string, sql: string) => withWarehouse(target, (w) => w.query(sql));
/** The rows a SQL data test flags (all of them: the site is small). */
async function failingRows(target: string, name: string): Promise<readonly Record<string, CellValue>[]> {
  const results = await withWarehouse(target, (w) => runDataTests(w, { sampleSize: 1000 }));
  const result = results.find((r) => r.name === name);
  expect(result?.status, name).not.toBe('error');
  return result?.sample ?? [];
}

describe.each(['duckdb', 'postgres'])('unreadable amounts on %s', (target) => {
  it('award_rates: the awarded value of a program with an unreadable award is unknown; the others are exact', async () => {
    const apps = sim.control.collection('applications');
    const awards = sim.control.collection('awards');
    const expected = sim.control.collection('programs').map((p) => {
      const ids = new Set(apps.filter((a) => idOf(a, 'program') === p.id && a.state !== 4).map((a) => Number(a.id)));
      const awarded = awards.filter((w) => ids.has(idOf(w, 'application')) && w.decision === 0);
      return { program_id: Number(p.id), awarded_value: total(awarded.map((w) => cents(w.value))) };
    });
    expect(expected.filter((e) => e.awarded_value === null)).toHaveLength(1);
    const actual = (await rows(target, 'SELECT program_id, awarded_value FROM award_rates ORDER BY program_id')).map(
      (r) => ({ program_id: Number(r.program_id), awarded_value: fromModel(r.awarded_value) }),
    );
    expect(actual).toEqual(expected.sort((a, b) => a.program_id - b.program_id));
  });

  it('funding_flow: a pair with an unreadable transfer has no total and does not reconcile; the others do', async () => {
    const transfers = new Map<string, (number | null)[]>();
    for (const t of sim.control.collection('financial_transactions')) {
      if (t.transaction_type !== 2 || t.destination_type !== 1) continue;
      const key = `${idOf(t, 'source')}/${idOf(t, 'destination')}`;
      transfers.set(key, [...(transfers.get(key) ?? []), cents(t.amount)]);
    }
    const got = await rows(target, 'SELECT * FROM funding_flow');
    expect(got.length).toBe(transfers.size);
    for (const r of got) {
      const key = `${String(r.fund_id)}/${String(r.program_id)}`;
      const sent = total(transfers.get(key) ?? []);
      expect(fromModel(r.transferred), key).toBe(sent);
      expect(r.reconciled, key).toBe(sent !== null);
    }
    expect(got.filter((r) => r.transferred === null)).toHaveLength(1);
    // The data test flags exactly the pairs funding_flow does not reconcile.
    const pair = (r: Record<string, CellValue>): string => `${String(r.fund_id)}/${String(r.program_id)}`;
    expect((await failingRows(target, 'budgets_match_transfers')).map(pair).sort()).toEqual(
      got
        .filter((r) => r.reconciled === false)
        .map(pair)
        .sort(),
    );
  });

  it('fund_utilization: a fund with an unreadable movement has unknown totals and does not reconcile', async () => {
    const txns = sim.control.collection('financial_transactions');
    const got = await rows(target, 'SELECT * FROM fund_utilization ORDER BY fund_id');
    expect(got.map((r) => Number(r.fund_id))).toEqual(sim.control.collection('funds').map((f) => Number(f.id)));
    for (const r of got) {
      const fund = Number(r.fund_id);
      const sum = (type: number, side: 'source' | 'destination'): number | null =>
        total(
          txns
            .filter((t) => t.transaction_type === type && t[`${side}_type`] === 2 && idOf(t, side) === fund)
            .map((t) => cents(t.amount)),
        );
      const parts = [sum(0, 'destination'), sum(1, 'source'), sum(2, 'source'), sum(2, 'destination')];
      const [deposits, withdrawals, transferred, received] = parts;
      expect([r.deposits, r.withdrawals, r.transferred, r.received].map(fromModel), `fund ${fund}`).toEqual(parts);
      const known = parts.every((p) => p !== null);
      const balance = known ? (deposits ?? 0) + (received ?? 0) - (withdrawals ?? 0) - (transferred ?? 0) : null;
      expect(fromModel(r.balance_from_transactions), `fund ${fund}`).toBe(balance);
      expect(r.reconciled, `fund ${fund}`).toBe(known);
      if (deposits === null) expect(r.utilization_rate).toBeNull();
    }
    expect(got.filter((r) => r.reconciled === false).length).toBeGreaterThan(0);
    expect((await failingRows(target, 'fund_balance_reconciles')).map((r) => Number(r.fund_id)).sort()).toEqual(
      got.filter((r) => r.reconciled === false).map((r) => Number(r.fund_id)),
    );
  });
});
