/**
 * A model whose header names its key (`-- primary_key:`) declares it on its table, on both engines, through every
 * way a rebuild replaces the table: made anew, rows replaced in a kept table (Postgres), or a table whose columns
 * changed swapped for the new one (Postgres), again and again.
 */
import { describe, expect, it } from 'vitest';
import { loadModels, runModels } from '../../src/models/index.ts';
import { loadSmallSite, openTestWarehouse } from '../support/model-fixtures.ts';

describe.each(['duckdb', 'postgres'] as const)('model keys (%s)', (dialect) => {
  it('are declared on the tables of the models that name one, and stay through rebuilds', async () => {
    const t = await openTestWarehouse(dialect, 'model_keys');
    try {
      await loadSmallSite(t.warehouse);
      const keyed = loadModels().filter((m) => (m.primaryKey ?? []).length > 0);
      expect(keyed.map((m) => m.name)).toContain('award_rates');
      const keys = async (): Promise<Record<string, string[]>> => {
        const rows = await t.warehouse.query(
          `SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc
             JOIN information_schema.key_column_usage kcu
               ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
              AND kcu.table_name = tc.table_name
            WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = $1
            ORDER BY tc.table_name, kcu.ordinal_position`,
          [t.warehouse.analyticsSchema],
        );
        const out: Record<string, string[]> = {};
        for (const r of rows) (out[String(r.table_name)] ??= []).push(String(r.column_name));
        return out;
      };
      const expected = Object.fromEntries(keyed.map((m) => [m.name, [...(m.primaryKey ?? [])]]));
      await runModels(t.warehouse);
      expect(await keys()).toEqual(expected);
      // Rows replaced in kept tables (Postgres), or tables made anew (DuckDB).
      await runModels(t.warehouse);
      expect(await keys()).toEqual(expected);
      // A table whose columns changed is swapped for the new one, twice (a key named after the swap's table would collide).
      for (let i = 0; i < 2; i++) {
        await t.warehouse.exec(`ALTER TABLE ${t.warehouse.qualifyModel('award_rates')} ADD COLUMN retired_${i} TEXT`);
        await runModels(t.warehouse, { only: ['award_rates'] });
        expect(await keys()).toEqual(expected);
      }
    } finally {
      await t.cleanup();
    }
  });
});
