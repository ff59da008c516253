import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataTests, hasErrorFailures, runDataTests, runModels, type DataTestResult } from '../../src/models/index.ts';
import type { Dialect } from '../../src/warehouse/index.ts';
import { load, loadSmallSite, openTestWarehouse, type TestWarehouse } from '../support/model-fixtures.ts';

const find = (results: DataTestResult[], name: string): DataTestResult | undefined =>
  results.find((r) => r.name === name);

describe.each<Dialect>(['duckdb', 'postgres'])('data tests on %s', (dialect) => {
  let t: TestWarehouse;
  beforeAll(async () => {
    t = await openTestWarehouse(dialect, 'datatests');
    await loadSmallSite(t.warehouse);
  });
  afterAll(async () => t?.cleanup());

  it('generates key, not-null, reference, enum and _raw tests from the catalog, each with a severity', () => {
    const names = dataTests().map((d) => d.name);
    expect(names).toContain('unique:applications(id)');
    expect(names).toContain('not_null:assignments.reviewer_id');
    expect(names).toContain('relationship:assignments.reviewer_id->users.id');
    expect(names).toContain('accepted_values:applications.state');
    expect(names).toContain('raw_present:awards');
    expect(names).toContain('fund_balance_reconciles');
    for (const d of dataTests()) expect(['error', 'warn']).toContain(d.severity);
  });

  it('all pass on consistent data', async () => {
    const results = await runDataTests(t.warehouse);
    expect(results.filter((r) => r.status !== 'pass')).toEqual([]);
    expect(hasErrorFailures(results)).toBe(false);
  });

  it('catch planted violations with their failing rows', async () => {
    // A reviewer that resolves nowhere, an undocumented state, money that does not add up.
    await load(
      t.warehouse,
      { assignments: [{ application_id: 101, reviewer_id: 777, stage_id: 10, program_id: 1 }] },
      'plant',
    );
    await t.warehouse.exec(`UPDATE applications SET state = 9 WHERE id = 102`);
    await t.warehouse.exec(`UPDATE funds SET balance = balance + 0.01 WHERE id = 2`);
    await t.warehouse.exec(`UPDATE budgets SET balance = balance - 5 WHERE id = 51`);
    await t.warehouse.exec(`UPDATE award_payments SET amount = 999.00 WHERE payment_id = 900`);
    await t.warehouse.exec(`UPDATE payment_sources SET amount = 1.00 WHERE payment_id = 900`);
    const results = await runDataTests(t.warehouse);

    const ref = find(results, 'relationship:assignments.reviewer_id->users.id');
    expect(ref).toMatchObject({ severity: 'error', status: 'fail', failing: 1 });
    expect(ref?.sample[0]?.missing_id).toBe(777);
    expect(find(results, 'accepted_values:applications.state')).toMatchObject({
      severity: 'warn',
      status: 'fail',
      failing: 1,
    });
    expect(find(results, 'fund_balance_reconciles')).toMatchObject({ status: 'fail', failing: 1 });
    expect(find(results, 'fund_balance_reconciles')?.sample[0]?.fund_id).toBe(2);
    expect(find(results, 'budgets_match_transfers')?.sample.map((r) => r.program_id)).toEqual([2]);
    expect(find(results, 'award_payments_match_payments')).toMatchObject({ status: 'fail', failing: 1 });
    expect(find(results, 'payments_match_sources')).toMatchObject({ status: 'fail', failing: 1 });
    expect(hasErrorFailures(results)).toBe(true);
    // Nothing else is flagged.
    const flagged = results
      .filter((r) => r.status !== 'pass')
      .map((r) => r.name)
      .sort();
    expect(flagged).toEqual(
      [
        'accepted_values:applications.state',
        'award_payments_match_payments',
        'budgets_match_transfers',
        'fund_balance_reconciles',
        'payments_match_sources',
        'relationship:assignments.reviewer_id->users.id',
      ].sort(),
    );
  });

  it('reports a test whose query cannot run as an error, without throwing', async () => {
    const results = await runDataTests(t.warehouse, {
      tables: [
        {
          name: 'no_such_table',
          kind: 'entity',
          description: '',
          primaryKey: ['id'],
          columns: [{ name: 'id', type: 'bigint', notNull: true, description: '' }],
        },
      ],
    });
    const unique = find(results, 'unique:no_such_table(id)');
    expect(unique?.status).toBe('error');
    expect(unique?.message).toMatch(/no_such_table/);
    expect(hasErrorFailures(results)).toBe(true);
  });
});

describe.each<Dialect>(['duckdb', 'postgres'])('budgets_match_transfers on %s', (dialect) => {
  it('flags exactly the (fund, program) pairs funding_flow cannot reconcile', async () => {
    const t = await openTestWarehouse(dialect, 'budgettest');
    try {
      const budgets = [
        // A new budget nothing has been transferred to yet: 0 = 0, valid.
        { id: 10, fund_id: 1, program_id: 1, budget: '0.00', allocated: '0.00', paid: '0.00', balance: '0.00' },
        // A balance that could not be typed (NULL): nothing to reconcile against.
        { id: 11, fund_id: 1, program_id: 2, budget: '50.00', allocated: '0.00', paid: '0.00', balance: null },
        // Agrees with its transfers.
        { id: 12, fund_id: 1, program_id: 3, budget: '25.00', allocated: '5.00', paid: '5.00', balance: '20.00' },
        // Agrees with the transfers whose amount is known, but another's is not: the total is unknown.
        { id: 13, fund_id: 1, program_id: 5, budget: '30.00', allocated: '0.00', paid: '0.00', balance: '30.00' },
        // The spec leaves open whether the balance is net of allocations. Consistent as budget - allocated - paid:
        { id: 14, fund_id: 1, program_id: 6, budget: '40.00', allocated: '10.00', paid: '5.00', balance: '25.00' },
        // ... as budget - paid, allocations aside:
        { id: 15, fund_id: 1, program_id: 7, budget: '40.00', allocated: '10.00', paid: '5.00', balance: '35.00' },
        // ... under neither reading:
        { id: 16, fund_id: 1, program_id: 8, budget: '40.00', allocated: '10.00', paid: '5.00', balance: '28.00' },
        // ... as budget - paid, with allocated unknown (it rules out only its own reading):
        { id: 17, fund_id: 1, program_id: 9, budget: '40.00', allocated: null, paid: '5.00', balance: '35.00' },
        // ... unknown allocated, and budget - paid does not hold either:
        { id: 18, fund_id: 1, program_id: 10, budget: '40.00', allocated: null, paid: '5.00', balance: '25.00' },
      ];
      const transfers = [
        { id: 2, amount: '50.00', program: 2 },
        { id: 3, amount: '25.00', program: 3 },
        // Transfers to a program without a budget row.
        { id: 4, amount: '7.00', program: 4 },
        { id: 5, amount: '30.00', program: 5 },
        // An amount that could not be typed (NULL).
        { id: 6, amount: null, program: 5 },
        ...[6, 7, 8, 9, 10].map((program) => ({ id: program + 1, amount: '40.00', program })),
      ];
      await load(t.warehouse, {
        programs: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((id) => ({ id, name: `P${id}` })),
        funds: [{ id: 1, name: 'F1', balance: '0.00' }],
        budgets,
        financial_transactions: transfers.map((x) => ({
          id: x.id,
          transaction_type: 2,
          amount: x.amount,
          source_type: 2,
          destination_type: 1,
          source_fund_id: 1,
          destination_program_id: x.program,
        })),
      });
      const cents = (v: string | null | undefined): number | null => (v == null ? null : Math.round(Number(v) * 100));
      const programs = new Set([...budgets.map((b) => b.program_id), ...transfers.map((x) => x.program)]);
      const expected = [...programs]
        .filter((p) => {
          const b = budgets.find((x) => x.program_id === p);
          const amounts = transfers.filter((x) => x.program === p).map((x) => cents(x.amount));
          const sent = amounts.includes(null) ? null : amounts.reduce<number>((s, c) => s + (c ?? 0), 0);
          const [budget, allocated, paid, balance] = [b?.budget, b?.allocated, b?.paid, b?.balance].map(cents);
          // Every reading of the balance the spec allows: budget - paid, budget - allocated - paid.
          const readings =
            budget == null || paid == null
              ? []
              : [budget - paid, ...(allocated == null ? [] : [budget - allocated - paid])];
          const reconciled = budget != null && sent !== null && budget === sent && readings.includes(balance ?? NaN);
          return !reconciled;
        })
        .sort((a, b) => a - b);
      // Each reading has a pair consistent under it alone, and one pair fails both.
      expect(expected).toEqual(expect.arrayContaining([8, 10]));
      expect(expected).not.toContain(6);
      expect(expected).not.toContain(7);
      expect(expected).not.toContain(9);
      const results = await runDataTests(t.warehouse);
      const test = find(results, 'budgets_match_transfers');
      expect(test?.status).toBe('fail');
      expect(test?.sample.map((r) => Number(r.program_id)).sort((a, b) => a - b)).toEqual(expected);
      // And the model says the same.
      await runModels(t.warehouse, { only: ['funding_flow'] });
      const flow = await t.warehouse.query('SELECT program_id FROM funding_flow WHERE NOT reconciled ORDER BY 1');
      expect(flow.map((r) => Number(r.program_id))).toEqual(expected);
    } finally {
      await t.cleanup();
    }
  });
});

describe.each<Dialect>(['duckdb', 'postgres'])('budget balance readings on %s', (dialect) => {
  it('passes when every budget is consistent under one reading the spec allows, and warns when under none', async () => {
    const t = await openTestWarehouse(dialect, 'budgetreading');
    try {
      // Program 1 reads balance = budget - paid; program 2 balance = budget - allocated - paid.
      const budgets = [
        { id: 1, fund_id: 1, program_id: 1, budget: '100.00', allocated: '30.00', paid: '20.00', balance: '80.00' },
        { id: 2, fund_id: 1, program_id: 2, budget: '100.00', allocated: '30.00', paid: '20.00', balance: '50.00' },
      ];
      await load(t.warehouse, {
        programs: [1, 2].map((id) => ({ id, name: `P${id}` })),
        funds: [{ id: 1, name: 'F1', balance: '0.00' }],
        budgets,
        financial_transactions: budgets.map((b) => ({
          id: b.id,
          transaction_type: 2,
          amount: b.budget,
          source_type: 2,
          destination_type: 1,
          source_fund_id: 1,
          destination_program_id: b.program_id,
        })),
      });
      expect(find(await runDataTests(t.warehouse), 'budgets_match_transfers')).toMatchObject({ status: 'pass' });
      await runModels(t.warehouse, { only: ['funding_flow'] });
      expect(await t.warehouse.query('SELECT program_id FROM funding_flow WHERE NOT reconciled')).toEqual([]);

      // A balance neither reading gives.
      await t.warehouse.exec(`UPDATE budgets SET balance = 65.00 WHERE id = 2`);
      const test = find(await runDataTests(t.warehouse), 'budgets_match_transfers');
      expect(test).toMatchObject({ status: 'fail', severity: 'warn', failing: 1 });
      expect(Number(test?.sample[0]?.program_id)).toBe(2);
    } finally {
      await t.cleanup();
    }
  });
});

describe.each<Dialect>(['duckdb', 'postgres'])('fund_balance_reconciles on %s', (dialect) => {
  it('flags exactly the funds fund_utilization cannot reconcile, an unknown amount included', async () => {
    const t = await openTestWarehouse(dialect, 'fundtest');
    try {
      // Fund 1 agrees with its deposits; fund 2 with the deposit whose amount is known, but another's is not.
      const funds = [
        { id: 1, name: 'F1', balance: '100.00' },
        { id: 2, name: 'F2', balance: '100.00' },
      ];
      const deposits = [
        { id: 1, fund: 1, amount: '100.00' },
        { id: 2, fund: 2, amount: '100.00' },
        { id: 3, fund: 2, amount: null },
      ];
      await load(t.warehouse, {
        funds,
        financial_transactions: deposits.map((d) => ({
          id: d.id,
          transaction_type: 0,
          amount: d.amount,
          source_type: 0,
          destination_type: 2,
          destination_fund_id: d.fund,
        })),
      });
      const cents = (v: string | null): number | null => (v === null ? null : Math.round(Number(v) * 100));
      const expected = funds
        .filter((f) => {
          const amounts = deposits.filter((d) => d.fund === f.id).map((d) => cents(d.amount));
          const total = amounts.includes(null) ? null : amounts.reduce<number>((s, c) => s + (c ?? 0), 0);
          return total !== cents(f.balance);
        })
        .map((f) => f.id);
      expect(expected.length).toBeGreaterThan(0);
      const test = find(await runDataTests(t.warehouse), 'fund_balance_reconciles');
      expect(test?.sample.map((r) => Number(r.fund_id)).sort()).toEqual(expected);
      await runModels(t.warehouse, { only: ['fund_utilization'] });
      const util = await t.warehouse.query('SELECT fund_id FROM fund_utilization WHERE NOT reconciled ORDER BY 1');
      expect(util.map((r) => Number(r.fund_id))).toEqual(expected);
    } finally {
      await t.cleanup();
    }
  });
});

describe.each<Dialect>(['duckdb', 'postgres'])('payments_match_sources on %s', (dialect) => {
  it('flags a payment whose amount or one of whose sources is unknown, even when the known ones add up', async () => {
    const t = await openTestWarehouse(dialect, 'paytest');
    try {
      const payments = [
        { id: 1, amount: '5.00' },
        { id: 2, amount: '10.00' },
        { id: 3, amount: null },
      ];
      const sources = [
        { payment_id: 1, source_id: 1, amount: '2.00' },
        { payment_id: 1, source_id: 2, amount: '3.00' },
        { payment_id: 2, source_id: 3, amount: '10.00' },
        // Amounts that could not be typed (NULL).
        { payment_id: 2, source_id: 4, amount: null },
        { payment_id: 3, source_id: 5, amount: null },
      ];
      await load(t.warehouse, { payments, payment_sources: sources });
      const cents = (v: string | null): number | null => (v === null ? null : Math.round(Number(v) * 100));
      const expected = payments
        .filter((p) => {
          const amounts = sources.filter((s) => s.payment_id === p.id).map((s) => cents(s.amount));
          const known = !amounts.includes(null) && p.amount !== null;
          return !known || amounts.reduce<number>((sum, c) => sum + (c ?? 0), 0) !== cents(p.amount);
        })
        .map((p) => p.id);
      expect(expected.length).toBeGreaterThan(0);
      const test = find(await runDataTests(t.warehouse), 'payments_match_sources');
      expect(test?.sample.map((r) => Number(r.payment_id)).sort()).toEqual(expected);
    } finally {
      await t.cleanup();
    }
  });
});
