import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataTests, hasErrorFailures, runDataTests, type DataTestResult } from '../../src/models/index.ts';
import type { Dialect } from '../../src/warehouse/index.ts';
import { load, loadSmallSite, openTestWarehouse, type TestWarehouse } from './fixtures.ts';

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
