/**
 * The README's example query, run as written against a synced warehouse on both engines, agrees with the
 * `award_rates` model it paraphrases: same programs, applications (trashed ones left out), awards and value.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CellValue } from '../../src/normalize/table-def.ts';
import { packageRoot } from '../../src/util/package-root.ts';
import { analyticsSchemaFor } from '../../src/warehouse/analytics-schema.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/index.ts';
import { postgresSchema, siteWithWarehouse, syncOnce } from '../support/harness.ts';

/** The README's first SQL block: the one after "awards per program". */
const readmeSql = /```sql\n([\s\S]*?)```/.exec(readFileSync(`${packageRoot}/README.md`, 'utf8'))![1]!;

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** Money read back as a number: Postgres writes a coalesced 0 as `0`, DuckDB as `0.00`. */
const amount = (v: CellValue | undefined): number | null => (v === null || v === undefined ? null : Number(v));

describe.each(['duckdb', 'postgres'] as const)("the README's example SQL (%s)", (engine) => {
  let warehouse: Warehouse;
  let analytics: string;

  beforeAll(async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 7 });
    cleanup.push(site.remove);
    let target: { warehouse: string; schema?: string } = { warehouse: site.warehouse };
    analytics = 'analytics';
    if (engine === 'postgres') {
      const pg = await postgresSchema();
      cleanup.push(pg.drop);
      target = { warehouse: pg.url, schema: pg.schema };
      analytics = analyticsSchemaFor(pg.schema);
    }
    // The case the README got wrong: trashed applications in the programs it shows.
    const trashed = site.sim.control.data.applications.rows.filter((a) => a.state === 4);
    expect(trashed.length).toBeGreaterThan(0);
    expect((await syncOnce(site.sim, { credentials: site.credentials, ...target })).status).toBe('succeeded');
    warehouse = await openWarehouse(target.warehouse, target.schema ? { schema: target.schema } : {});
    cleanup.push(() => warehouse.close());
  }, 120_000);

  it('returns the top programs of award_rates with the same counts and value', async () => {
    const readme = await warehouse.queryOwnTables(readmeSql);
    const model = await warehouse.query(
      `SELECT program_name, applications, awarded, awarded_value FROM ${analytics}.award_rates`,
    );
    expect(readme).toHaveLength(3);
    // The same three awarded values as the model's top three (which programs, when two tie, may differ).
    const top = model
      .map((r) => amount(r.awarded_value))
      .sort((a, b) => (b ?? -Infinity) - (a ?? -Infinity))
      .slice(0, 3);
    expect(readme.map((r) => amount(r.awarded_value))).toEqual(top);
    for (const r of readme) {
      const row = { applications: Number(r.applications), awarded: Number(r.awarded), value: amount(r.awarded_value) };
      const same = model
        .filter((m) => m.program_name === r.program)
        .map((m) => ({
          applications: Number(m.applications),
          awarded: Number(m.awarded),
          value: amount(m.awarded_value),
        }));
      expect(same).toContainEqual(row);
    }
  });
});
