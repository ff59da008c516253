import { describe, expect, it } from 'vitest';
import { runModels } from '../../src/models/index.ts';
import type { Dialect } from '../../src/warehouse/index.ts';
import { load, openTestWarehouse } from '../support/model-fixtures.ts';

/** num / den rounded half up to `places` decimals, in exact integer arithmetic (positive values). */
function halfUp(num: bigint, den: bigint, places: number): string {
  const scaled = (num * 10n ** BigInt(places) * 2n + den) / (2n * den);
  const digits = scaled.toString().padStart(places + 1, '0');
  return `${digits.slice(0, -places)}.${digits.slice(-places)}`;
}
const cents = (money: string): bigint => BigInt(money.replace('.', ''));

/**
 * Ratios and day counts whose exact value ends in a 5 just past the kept decimals: binary floating point holds them
 * a hair below (0.5000045 as 0.50000449..., 1.005 as 1.00499...), so a rounding of the floating-point value goes down where exact
 * decimal rounding goes up. Both engines must give the exact half-up result.
 */
describe.each<Dialect>(['duckdb', 'postgres'])('model ratios on %s', (dialect) => {
  it('round half up like exact decimal arithmetic', async () => {
    const t = await openTestWarehouse(dialect, 'rounding');
    try {
      const submitted = '2025-01-01T00:00:00.000Z';
      const latencySeconds = 6156; // 0.07125 days
      const decided = new Date(Date.parse(submitted) + latencySeconds * 1000).toISOString();
      const stageRecords = [
        { assigned: 600, completed: 40 },
        { assigned: 40, completed: 1 },
      ];
      // 1.005 % of the deposit: 1.005 is held as 1.00499999... in binary floating point.
      const allocated = '10050.00';
      const deposit = '1000000.00';
      await load(t.warehouse, {
        programs: [{ id: 1, name: 'P1' }],
        stages: [{ id: 10, title: 'Review' }],
        applications: stageRecords.map((_, i) => ({
          id: 100 + i,
          title: `A${i}`,
          state: 0,
          program_id: 1,
          current_stage_id: 10,
          created_at: submitted,
          last_submitted_at: submitted,
        })),
        application_stages: stageRecords.map((r, i) => ({
          application_id: 100 + i,
          stage_id: 10,
          state: 0,
          created_at: submitted,
          reviews_assigned: r.assigned,
          reviews_submitted: r.completed,
          reviews_completed: r.completed,
        })),
        awards: [{ id: 1, application_id: 100, program_id: 1, decision: 1, value: '0.00', awarded_at: decided }],
        funds: [{ id: 1, name: 'F1', balance: deposit }],
        budgets: [{ id: 5, fund_id: 1, program_id: 1, budget: '0.00', allocated, paid: '0.00', balance: '0.00' }],
        financial_transactions: [
          { id: 1, transaction_type: 0, amount: deposit, source_type: 0, destination_type: 2, destination_fund_id: 1 },
        ],
      });
      await runModels(t.warehouse);

      const assigned = stageRecords.reduce((s, r) => s + r.assigned, 0);
      const completed = stageRecords.reduce((s, r) => s + r.completed, 0);
      const [progress] = await t.warehouse.query('SELECT completion_rate FROM review_progress');
      expect(progress?.completion_rate).toBe(halfUp(BigInt(completed), BigInt(assigned), 6));

      const [latency] = await t.warehouse.query('SELECT median_days, p90_days, mean_days FROM decision_latency');
      const days = halfUp(BigInt(latencySeconds), 86_400n, 4);
      expect(latency).toEqual({ median_days: days, p90_days: days, mean_days: days });

      const [fund] = await t.warehouse.query('SELECT utilization_rate FROM fund_utilization');
      expect(fund?.utilization_rate).toBe(halfUp(cents(allocated), cents(deposit), 4));
    } finally {
      await t.cleanup();
    }
  });
});
