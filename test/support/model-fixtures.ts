import { clusterName, dropPostgresSchema, postgresUrl } from './postgres.ts';

import { join } from 'node:path';

import type { Row } from '../../src/normalize/table-def.ts';

import { openWarehouse, type Dialect, type Warehouse } from '../../src/warehouse/index.ts';
import { tables } from '../../src/streams/registry.ts';
import { tempDir } from './temp-dir.ts';

export interface TestWarehouse {
  readonly warehouse: Warehouse;
  readonly target: string;
  readonly schema: string;
  cleanup(): Promise<void>;
}

/**
 * Opens and migrates a warehouse; if either fails, `undo` removes what was made (the error is the one to see, so
 * a failing undo does not hide it).
 */
async function migrated(
  open: () => Promise<Warehouse>,
  undo: (opened?: Warehouse) => Promise<void>,
): Promise<Warehouse> {
  let warehouse: Warehouse | undefined;
  try {
    warehouse = await open();
    await warehouse.migrate(tables);
    return warehouse;
  } catch (error) {
    await undo(warehouse).catch(() => undefined);
    throw error;
  }
}

/** A migrated warehouse: a DuckDB file in a temp dir, or a unique Postgres schema dropped afterwards. */
export async function openTestWarehouse(dialect: Dialect, label: string): Promise<TestWarehouse> {
  if (dialect === 'duckdb') {
    const dir = await tempDir(`gf-${label}-`);
    const target = join(dir.path, 'warehouse.duckdb');
    const remove = async (opened?: Warehouse): Promise<void> => {
      await opened?.close();
      await dir.remove();
    };
    const warehouse = await migrated(() => openWarehouse(target), remove);
    return { warehouse, target, schema: 'main', cleanup: () => remove(warehouse) };
  }
  const schema = `${clusterName(label)}_${Math.floor(Math.random() * 1e6)}`;
  const drop = async (opened?: Warehouse): Promise<void> => {
    await opened?.close();
    await dropPostgresSchema(schema);
  };
  const warehouse = await migrated(() => openWarehouse(postgresUrl, { schema }), drop);
  return { warehouse, target: postgresUrl, schema, cleanup: () => drop(warehouse) };
}

/** When `load` says its rows were fetched: their `_extracted_at`. */
export const loadedAt = '2026-01-01T00:00:00.000Z';

/** Rows per table; every row gets a `_raw`. */
export type Dataset = Record<string, Row[]>;

export async function load(warehouse: Warehouse, data: Dataset, runId = 'test-run'): Promise<void> {
  const unit = await warehouse.openLoad();
  for (const [table, rows] of Object.entries(data)) {
    const withRaw = (list: Row[]): Row[] => list.map((r) => ({ _raw: JSON.stringify(r), ...r }));
    // Rows marked `_ref_only` load as references do (coalesce), which is what makes them reference-only.
    const own = rows.filter((r) => r._ref_only !== true);
    const refs = rows.filter((r) => r._ref_only === true).map(({ _ref_only: _, ...r }) => r);
    if (own.length > 0) await unit.append(table, withRaw(own));
    if (refs.length > 0) await unit.append(table, withRaw(refs), 'coalesce');
  }
  await unit.commit({ runId, extractedAt: loadedAt });
}

/** Soft-delete rows by id (what a complete scan that no longer returns them would do). */
/** A DuckDB warehouse holding one program and one application: enough for a snapshot write to have files to publish. */
export async function openTinyDuckDB(label: string): Promise<TestWarehouse> {
  const t = await openTestWarehouse('duckdb', label);
  await load(t.warehouse, {
    programs: [{ id: 1, name: 'P1' }],
    applications: [{ id: 1, title: 'A', program_id: 1 }],
  });
  return t;
}

export async function softDelete(warehouse: Warehouse, table: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await warehouse.exec(`UPDATE ${table} SET _deleted_at = '2026-01-02T00:00:00Z' WHERE id IN (${ids.join(', ')})`);
}

const ts = (day: number, hour = 0): string => new Date(Date.UTC(2025, 0, 1 + day, hour)).toISOString();
const money = (cents: number): string => `${Math.trunc(cents / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;

/**
 * A small hand-made site: four programs (one without applications, one deleted), applications in every state
 * (one trashed, one deleted), awards and declines, reviewers and stages, funds whose money reconciles.
 * `deleted` lists the ids to soft-delete after loading.
 */
export function smallSite(): { data: Dataset; deleted: Record<string, number[]> } {
  const programs: Row[] = [1, 2, 3, 4].map((id) => ({ id, name: `Program ${id}` }));
  const users: Row[] = [];
  for (let id = 1; id <= 12; id++)
    users.push({ id, first_name: `First${id}`, last_name: `Last${id}`, email: `u${id}@example.org` });
  const stages: Row[] = [10, 11, 20, 21].map((id) => ({ id, title: `Stage ${id}` }));
  const applications: Row[] = [];
  const applicationStages: Row[] = [];
  const awards: Row[] = [];
  let awardId = 0;
  // Program 1: 8 applications, program 2: 4 (all declined), program 4: 2; program 3 has none.
  const plan: [number, number][] = [
    [1, 8],
    [2, 4],
    [4, 2],
  ];
  let appId = 100;
  for (const [programId, count] of plan) {
    const first = programId === 2 ? 20 : 10;
    for (let i = 0; i < count; i++) {
      const id = ++appId;
      const state = i === 1 ? 4 : i % 3 === 2 ? 3 : 0; // the second application of each program is trashed
      const inSecond = i % 2 === 0;
      applications.push({
        id,
        title: `App ${id}`,
        state,
        applicant_id: 1 + (i % 4),
        program_id: programId,
        current_stage_id: inSecond ? first + 1 : first,
        created_at: ts(i),
        last_submitted_at: i === 3 ? null : ts(10 + i, i),
      });
      applicationStages.push({
        application_id: id,
        stage_id: first,
        state: 0,
        created_at: ts(i, 1),
        reviews_assigned: 3,
        reviews_submitted: 2,
        reviews_completed: i % 3,
      });
      if (inSecond) {
        applicationStages.push({
          application_id: id,
          stage_id: first + 1,
          state: i % 4 === 0 ? 1 : 2,
          created_at: ts(20 + i),
          reviews_assigned: i,
          reviews_submitted: 0,
          reviews_completed: 0,
        });
      }
      if (i !== 5) {
        const decision = programId === 2 ? 1 : i % 3 === 0 ? 1 : 0;
        const cents = decision === 0 ? 100_000 + i * 12_345 : 0;
        awards.push({
          id: ++awardId,
          application_id: id,
          program_id: programId,
          decision,
          value: money(cents),
          awarded_at: ts(40 + i * 3, 5),
        });
      }
    }
  }
  // A deleted award on a live application of program 1 (must not count).
  awards.push({ id: ++awardId, application_id: 101, program_id: 1, decision: 0, value: '999.99', awarded_at: ts(60) });
  const deletedAward = awardId;
  const assignments: Row[] = [];
  for (const app of applications) {
    const appNo = Number(app.id);
    for (const reviewer of [5, 6, 7]) {
      if ((appNo + reviewer) % 3 === 0) continue;
      assignments.push({
        application_id: appNo,
        reviewer_id: reviewer,
        stage_id: Number(app.current_stage_id),
        program_id: Number(app.program_id),
      });
    }
  }
  // Money: fund 1 funds programs 1 and 2, fund 2 funds program 1; deposits - withdrawals - transfers = balance.
  const transfers = [
    { fund: 1, program: 1, cents: [300_000_00, 200_000_00] },
    { fund: 1, program: 2, cents: [150_000_00] },
    { fund: 2, program: 1, cents: [75_000_50] },
  ];
  const deposits = [
    { fund: 1, cents: [700_000_00, 10_000_25] },
    { fund: 2, cents: [100_000_00] },
  ];
  const withdrawals = [{ fund: 2, cents: 5_000_00 }];
  // Fund 1 moves money to fund 2: out of one, into the other.
  const fundTransfers = [{ from: 1, to: 2, cents: 2_500_00 }];
  const txns: Row[] = [];
  let txnId = 0;
  for (const d of deposits)
    for (const c of d.cents)
      txns.push({
        id: ++txnId,
        transaction_type: 0,
        amount: money(c),
        source_type: 0,
        destination_type: 2,
        destination_fund_id: d.fund,
      });
  for (const w of withdrawals)
    txns.push({
      id: ++txnId,
      transaction_type: 1,
      amount: money(w.cents),
      source_type: 2,
      destination_type: 0,
      source_fund_id: w.fund,
    });
  for (const t of fundTransfers)
    txns.push({
      id: ++txnId,
      transaction_type: 2,
      amount: money(t.cents),
      source_type: 2,
      destination_type: 2,
      source_fund_id: t.from,
      destination_fund_id: t.to,
    });
  for (const t of transfers)
    for (const c of t.cents)
      txns.push({
        id: ++txnId,
        transaction_type: 2,
        amount: money(c),
        source_type: 2,
        destination_type: 1,
        source_fund_id: t.fund,
        destination_program_id: t.program,
      });
  const funds: Row[] = deposits.map((d) => {
    const dep = d.cents.reduce((s, c) => s + c, 0);
    const wd = withdrawals.filter((w) => w.fund === d.fund).reduce((s, w) => s + w.cents, 0);
    const tr = transfers
      .filter((t) => t.fund === d.fund)
      .flatMap((t) => t.cents)
      .reduce((s, c) => s + c, 0);
    const moved = fundTransfers.reduce(
      (s, t) => s + (t.to === d.fund ? t.cents : 0) - (t.from === d.fund ? t.cents : 0),
      0,
    );
    return { id: d.fund, name: `Fund ${d.fund}`, balance: money(dep - wd - tr + moved), total: money(dep) };
  });
  // A fund known only from references (the funds endpoint refused): no balance to reconcile.
  funds.push({ id: 3, name: 'Fund 3', _ref_only: true });
  const paidCents = [12_345_00, 0, 1_000_00];
  const budgets: Row[] = transfers.map((t, i) => {
    const total = t.cents.reduce((s, c) => s + c, 0);
    const paid = paidCents[i] ?? 0;
    return {
      id: 50 + i,
      fund_id: t.fund,
      program_id: t.program,
      budget: money(total),
      allocated: money(paid * 2),
      paid: money(paid),
      balance: money(total - paid),
    };
  });
  // Payments: one payment of award 5 (an awarded one), listed on the award, drawn from one source.
  const payments: Row[] = [{ id: 900, amount: '1000.00', decision_award_id: 5, decision: 0 }];
  const awardPayments: Row[] = [{ award_id: 5, payment_id: 900, amount: '1000.00' }];
  const paymentSources: Row[] = [{ payment_id: 900, source_id: 1, amount: '1000.00' }];
  return {
    data: {
      programs,
      users,
      stages,
      applications,
      application_stages: applicationStages,
      awards,
      assignments,
      funds,
      budgets,
      financial_transactions: txns,
      payments,
      award_payments: awardPayments,
      payment_sources: paymentSources,
    },
    deleted: { programs: [4], applications: [103], awards: [deletedAward] },
  };
}

export async function loadSmallSite(warehouse: Warehouse): Promise<Dataset> {
  const { data, deleted } = smallSite();
  await load(warehouse, data);
  for (const [table, ids] of Object.entries(deleted)) await softDelete(warehouse, table, ids);
  // The returned rows carry the soft deletion too, so tests compute expectations from what was stored.
  const out: Dataset = {};
  for (const [table, rows] of Object.entries(data)) {
    const gone = new Set(deleted[table] ?? []);
    out[table] = rows.map((r) => ({ ...r, _deleted_at: gone.has(Number(r.id)) ? '2026-01-02T00:00:00Z' : null }));
  }
  return out;
}
