/**
 * A warehouse an older version made keeps working after the columns named for their unit (issue 41): text money
 * `awarded` becomes `awarded_as_sent` and percentages become fractions named `*_rate`, values moved, nothing lost, the
 * `<table>_current` views showing the new names. The older warehouse is made here from a current one, its columns
 * put back as the older version had them, with the migration's record removed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../src/streams/registry.ts';
import { percentAsFraction } from '../../src/normalize/coerce.ts';
import { renamedColumns } from '../../src/warehouse/unit-names-migration.ts';
import type { Dialect } from '../../src/warehouse/index.ts';
import { load, openTestWarehouse, type TestWarehouse } from '../support/model-fixtures.ts';

/** What the older version stored: the site's percentages as sent. */
const fundPercents: readonly (number | null)[] = [49.75, 100, 0, 33.33, 57.3, null];
const taskPercents: readonly (number | null)[] = [0, 25, 50, 75, 100, 33, null];
const sentText: readonly (string | null)[] = ['$27,986.17', '1 250,00', null];

describe.each<Dialect>(['duckdb', 'postgres'])('columns renamed for their unit, on %s', (dialect) => {
  let t: TestWarehouse;
  const double = dialect === 'duckdb' ? 'DOUBLE' : 'DOUBLE PRECISION';
  beforeAll(async () => {
    t = await openTestWarehouse(dialect, 'units');
    const money = sentText.map((text, i) => ({ id: i + 1, awarded_as_sent: text }));
    await load(t.warehouse, {
      applications: money,
      awards: money,
      payments: money,
      funds: fundPercents.map((_, i) => ({ id: i + 1, name: `F${i + 1}` })),
      application_stages: taskPercents.map((_, i) => ({ application_id: 1, stage_id: i + 1 })),
    });
    // Back to the older version's warehouse: its views, made before the rename, and its column names and units.
    const run = (statement: string) => t.warehouse.exec(statement);
    for (const r of renamedColumns) await run(`DROP VIEW ${r.table}_current`);
    for (const r of renamedColumns) await run(`ALTER TABLE ${r.table} RENAME COLUMN ${r.to} TO ${r.from}`);
    await run(`ALTER TABLE application_stages ALTER COLUMN task_completion TYPE INTEGER USING NULL`);
    for (const [i, p] of fundPercents.entries())
      await run(`UPDATE funds SET utilization = CAST(${p ?? 'NULL'} AS ${double}) WHERE id = ${i + 1}`);
    for (const [i, p] of taskPercents.entries())
      await run(`UPDATE application_stages SET task_completion = ${p ?? 'NULL'} WHERE stage_id = ${i + 1}`);
    for (const r of renamedColumns)
      await run(`CREATE VIEW ${r.table}_current AS SELECT * FROM ${r.table} WHERE _deleted_at IS NULL`);
    // A view of an analyst's own over a renamed column: Postgres keeps it working (it follows the column).
    if (dialect === 'postgres') await run('CREATE VIEW analyst_sent AS SELECT id, awarded FROM applications');
    // The older version had neither this migration nor the ones after it (they would run again, in order).
    await run(`DELETE FROM _grantflow_migrations WHERE name >= '005_unit_names'`);
    await t.warehouse.migrate(tables);
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('keeps the text money under its new name', async () => {
    for (const table of ['applications', 'awards', 'payments']) {
      const rows = await t.warehouse.query(`SELECT id, awarded_as_sent FROM ${table}_current ORDER BY id`);
      expect(rows.map((r) => r.awarded_as_sent)).toEqual(sentText);
    }
    if (dialect === 'postgres') {
      const rows = await t.warehouse.query('SELECT id, awarded FROM analyst_sent ORDER BY id');
      expect(rows.map((r) => r.awarded)).toEqual(sentText);
    }
  });

  it('turns percentages into fractions, as a load now reads them', async () => {
    const funds = await t.warehouse.query('SELECT id, utilization_rate FROM funds_current ORDER BY id');
    expect(funds.map((r) => r.utilization_rate)).toEqual(fundPercents.map(percentAsFraction));
    const stages = await t.warehouse.query(
      'SELECT stage_id, task_completion_rate FROM application_stages_current ORDER BY stage_id',
    );
    expect(stages.map((r) => r.task_completion_rate)).toEqual(taskPercents.map(percentAsFraction));
  });

  it('leaves no old name in the tables or their views, and a second migration changes nothing', async () => {
    const names = async () =>
      (
        await t.warehouse.query(
          `SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = '${t.schema}' AND column_name IN ('awarded', 'utilization', 'task_completion')`,
        )
      ).map((r) => `${String(r.table_name)}.${String(r.column_name)}`);
    expect(await names()).toEqual(dialect === 'postgres' ? ['analyst_sent.awarded'] : []);
    await t.warehouse.migrate(tables);
    const funds = await t.warehouse.query('SELECT utilization_rate FROM funds ORDER BY id');
    expect(funds.map((r) => r.utilization_rate)).toEqual(fundPercents.map(percentAsFraction));
  });
});
