import type { JsonObject } from '../util/json.ts';
import type { Dataset, SimUser } from './dataset.ts';
import { DAY_MS, dollars, EPOCH_MS, moneyString, timestamp } from './format.ts';
import type { Rng } from './random.ts';

interface BudgetAcc {
  id: number;
  programId: number;
  fundId: number;
  transferred: number;
  allocated: number;
  paid: number;
  transfers: number[];
}

interface FundAcc {
  id: number;
  name: string;
  deposits: number[];
  withdrawals: number[];
  transferred: number;
}

interface PendingPayment {
  id: number;
  cents: number;
  budget: BudgetAcc;
  award: JsonObject;
  dateMs: number;
}

/**
 * Awards, payments, funds, budgets and transactions, all from integer cents so that every identity in
 * docs/simulator.md holds exactly. Also completes each program's money fields and each decided application's
 * `decision`.
 */
export function generateFinance(ds: Dataset, rng: Rng, fundCount: number): void {
  const admin = (): SimUser => rng.pick(ds.admins);
  const funds: FundAcc[] = [];
  for (let f = 1; f <= fundCount; f++) {
    funds.push({
      id: f,
      name: `${rng.pick(['General', 'Endowment', "Founders'", 'Community', 'Émergence'])} Fund ${f}`,
      deposits: [],
      withdrawals: [],
      transferred: 0,
    });
  }
  const budgets: BudgetAcc[] = [];
  const budgetsByProgram = new Map<number, BudgetAcc[]>();
  for (const program of ds.programs.rows) {
    const pid = program['id'] as number;
    const chosen = rng.sample(funds, rng.int(1, Math.min(2, funds.length)));
    const list = chosen.map((fund) => {
      const b: BudgetAcc = {
        id: budgets.length + 1,
        programId: pid,
        fundId: fund.id,
        transferred: 0,
        allocated: 0,
        paid: 0,
        transfers: [],
      };
      budgets.push(b);
      return b;
    });
    budgetsByProgram.set(pid, list);
  }

  const statusPaid = ds.paymentStatuses;
  const pending: PendingPayment[] = [];
  let awardId = 0;
  let paymentId = 0;
  for (const app of ds.applications.rows) {
    if (!rng.chance(0.3)) continue;
    const appId = app['id'] as number;
    const meta = ds.appMeta.get(appId);
    if (!meta) continue;
    const budget = rng.pick(budgetsByProgram.get(meta.programId) ?? []);
    const awarded = rng.chance(0.7);
    const cents = awarded ? rng.int(5, 500) * 10_000 + (rng.chance(0.2) ? rng.int(1, 9_999) : 0) : 0;
    const id = ++awardId;
    const awardedMs = meta.createdMs + rng.int(30, 120) * DAY_MS;
    const award: JsonObject = {
      id,
      program: app['program'] ?? null,
      application: { title: app['title'] ?? '', id: appId },
      applicant: app['applicant'] ?? null,
      awarded: moneyString(cents),
      awarded_at: timestamp(rng, awardedMs),
      created_at: timestamp(rng, awardedMs - DAY_MS),
      updated_at: timestamp(rng, awardedMs + DAY_MS),
      custom_fields: [],
      notification_message: awarded
        ? 'Congratulations! 🎉 Your application was funded.'
        : "We're sorry — not this time.",
      decision: awarded ? 0 : 1,
      value: dollars(cents),
      applicant_decision_required: awarded && rng.chance(0.5),
      applicant_decision_deadline: timestamp(rng, awardedMs + 30 * DAY_MS),
      applicant_decision_submitted_on: awarded && rng.chance(0.6) ? timestamp(rng, awardedMs + 5 * DAY_MS) : '',
      visible: rng.chance(0.9),
      applicant_decision: awarded ? rng.pick([0, 2, 2, 3]) : 0,
      applicant_note: rng.chance(0.1) ? 'Thank you — we\'ll "deliver"!' : '',
      payments: [],
    };
    ds.awards.insert(award);
    app['decision'] = { id, decision: awarded ? 0 : 1, awarded: moneyString(cents) };
    if (!awarded) continue;
    budget.allocated += cents;
    // Paid in full once, in two halves, or not yet.
    const roll = rng.next();
    const parts = roll < 0.6 ? [cents] : roll < 0.8 ? [Math.floor(cents / 2), cents - Math.floor(cents / 2)] : [];
    parts.forEach((part, i) => {
      pending.push({ id: ++paymentId, cents: part, budget, award, dateMs: awardedMs + (i + 1) * 14 * DAY_MS });
      budget.paid += part;
    });
  }

  // Transfers cover allocations plus slack; deposits cover transfers and withdrawals plus slack.
  for (const b of budgets) {
    const total = b.allocated + rng.int(1, 50) * 100_000;
    const first = rng.chance(0.5) ? Math.floor(total / 3) : total;
    b.transfers = first === total ? [total] : [first, total - first];
    b.transferred = total;
    const fund = funds[b.fundId - 1];
    if (fund) fund.transferred += total;
  }
  for (const f of funds) {
    const slack = rng.int(10, 200) * 100_000;
    const withdrawal = rng.chance(0.5) ? rng.int(1, 9) * 100_000 : 0;
    if (withdrawal) f.withdrawals.push(withdrawal);
    const total = f.transferred + slack + withdrawal;
    const a = Math.floor(total / 2);
    f.deposits = rng.chance(0.5) ? [a, total - a] : [total];
  }

  // Program money fields, then the final fund and budget records.
  for (const program of ds.programs.rows) {
    const list = budgetsByProgram.get(program['id'] as number) ?? [];
    const sum = (k: 'transferred' | 'allocated' | 'paid'): number => list.reduce((s, b) => s + b[k], 0);
    program['total'] = dollars(sum('transferred'));
    program['allocated'] = dollars(sum('allocated'));
    program['paid'] = dollars(sum('paid'));
    program['balance'] = dollars(sum('transferred') - sum('paid'));
    program['funding_sources'] = list.map((b) => ({
      id: b.id,
      balance: dollars(b.transferred - b.paid),
      fund: fundRef(funds, b.fundId),
    }));
    program['awards_made'] = ds.awards.rows.filter(
      (a) => a['decision'] === 0 && (a['program'] as JsonObject | null)?.['id'] === program['id'],
    ).length;
  }
  for (const f of funds) {
    const mine = budgets.filter((b) => b.fundId === f.id);
    const total = f.deposits.reduce((s, c) => s + c, 0);
    const withdrawn = f.withdrawals.reduce((s, c) => s + c, 0);
    const allocated = mine.reduce((s, b) => s + b.allocated, 0);
    ds.funds.insert({
      id: f.id,
      created_by: admin().ref,
      name: f.name,
      site_fund_id: 5000 + f.id,
      created_at: timestamp(rng, EPOCH_MS - 60 * DAY_MS),
      fund_folder: { id: (f.id % 2) + 1, name: f.id % 2 ? 'Restricted' : 'Unrestricted' },
      custom_fields: [],
      balance: dollars(total - withdrawn - f.transferred),
      total: dollars(total),
      allocated: dollars(allocated),
      paid: dollars(mine.reduce((s, b) => s + b.paid, 0)),
      available_to_programs: dollars(f.transferred),
      utilization: total > 0 ? Math.round((allocated * 10_000) / total) / 100 : 0,
    });
  }
  for (const b of budgets) {
    const program = ds.programs.get(b.programId);
    ds.budgets.insert({
      id: b.id,
      paid: dollars(b.paid),
      allocated: dollars(b.allocated),
      balance: dollars(b.transferred - b.paid),
      budget: dollars(b.transferred),
      fund: fundRef(funds, b.fundId),
      created_at: timestamp(rng, EPOCH_MS - 20 * DAY_MS),
      program: { id: b.programId, name: program?.['name'] ?? '' },
    });
  }

  // Transactions in id order: deposits, withdrawals, transfers, then payments.
  let txnId = 0;
  const fundBalance = new Map<number, number>();
  const budgetBalance = new Map<number, number>();
  const txn = (type: number, cents: number, ms: number, extra: JsonObject): JsonObject => {
    const id = ++txnId;
    const who = admin().ref;
    const row: JsonObject = {
      id,
      transaction_id: 100_000 + id,
      transaction_date: timestamp(rng, ms),
      created_at: timestamp(rng, ms),
      updated_at: timestamp(rng, ms + 3_600_000),
      created_by: who,
      updated_by: who,
      notes: rng.chance(0.1) ? 'Q3 top-up — per board\'s "approval"' : '',
      transaction_type: type,
      amount: dollars(cents),
      payment: null,
      ...extra,
    };
    ds.transactions.insert(row);
    return row;
  };
  for (const f of funds) {
    for (const c of f.deposits) {
      fundBalance.set(f.id, (fundBalance.get(f.id) ?? 0) + c);
      txn(0, c, EPOCH_MS - 50 * DAY_MS, {
        source_type: 0,
        destination_type: 2,
        new_source_balance: 0,
        new_destination_balance: dollars(fundBalance.get(f.id) ?? 0),
        source: null,
        destination: fundRef(funds, f.id),
      });
    }
  }
  for (const f of funds) {
    for (const c of f.withdrawals) {
      fundBalance.set(f.id, (fundBalance.get(f.id) ?? 0) - c);
      txn(1, c, EPOCH_MS - 40 * DAY_MS, {
        source_type: 2,
        destination_type: 0,
        new_source_balance: dollars(fundBalance.get(f.id) ?? 0),
        new_destination_balance: 0,
        source: fundRef(funds, f.id),
        destination: null,
      });
    }
  }
  for (const b of budgets) {
    for (const c of b.transfers) {
      fundBalance.set(b.fundId, (fundBalance.get(b.fundId) ?? 0) - c);
      budgetBalance.set(b.id, (budgetBalance.get(b.id) ?? 0) + c);
      txn(2, c, EPOCH_MS - 30 * DAY_MS, {
        source_type: 2,
        destination_type: 1,
        new_source_balance: dollars(fundBalance.get(b.fundId) ?? 0),
        new_destination_balance: dollars(budgetBalance.get(b.id) ?? 0),
        source: fundRef(funds, b.fundId),
        destination: ds.programs.get(b.programId) ?? null,
      });
    }
  }
  for (const p of pending) {
    budgetBalance.set(p.budget.id, (budgetBalance.get(p.budget.id) ?? 0) - p.cents);
    const status = rng.pick(statusPaid);
    const awardRow = p.award;
    const appRef = awardRow['application'] as JsonObject;
    const program = ds.programs.get(p.budget.programId);
    const txnIdNext = txnId + 1;
    const dateStr = timestamp(rng, p.dateMs);
    const payment: JsonObject = {
      id: p.id,
      amount: dollars(p.cents),
      created_by: admin().ref,
      created_at: dateStr,
      custom_fields: [],
      decision: { id: awardRow['id'] ?? 0, decision: 0, awarded: awardRow['awarded'] ?? '' },
      effective_date: dateStr,
      note: rng.chance(0.1) ? 'Paid via wire — ref #42 "urgent"' : '',
      note_applicant_visible: rng.chance(0.5),
      status,
      sources: [
        { id: txnIdNext, transaction_id: 100_000 + txnIdNext, transaction_date: dateStr, amount: dollars(p.cents) },
      ],
    };
    // A payment draws on a program fund budget: source is the program (with the fund it draws from).
    txn(3, p.cents, p.dateMs, {
      source_type: 1,
      destination_type: 3,
      new_source_balance: dollars(budgetBalance.get(p.budget.id) ?? 0),
      new_destination_balance: dollars(p.cents),
      source: {
        id: p.budget.programId,
        name: program?.['name'] ?? '',
        fund: fundRef(funds, p.budget.fundId),
        budget_id: p.budget.id,
      },
      destination: appRef,
      payment,
    });
    ds.payments.insert(payment);
    (awardRow['payments'] as JsonObject[]).push({ id: p.id, amount: dollars(p.cents), status });
  }
}

function fundRef(funds: readonly FundAcc[], id: number): JsonObject {
  return { id, name: funds[id - 1]?.name ?? '' };
}
