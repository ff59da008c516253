import pg from 'pg';
import { clusterName, postgresUrl } from '../support/postgres.ts';

import { expect, it } from 'vitest';

import { loadModels, runModels } from '../../src/models/index.ts';

import { openWarehouse } from '../../src/warehouse/index.ts';

import { load, loadSmallSite, openTestWarehouse, smallSite } from '../support/model-fixtures.ts';
import { tables } from '../../src/streams/registry.ts';

/**
 * Analysts and BI tools put views on model tables. Postgres will not drop a table a view depends on, so rebuilding
 * the models must keep such tables (replacing their rows) and still replace a table whose columns changed.
 */
it('rebuilds Postgres models that views depend on, and replaces a table whose columns changed', async () => {
  const t = await openTestWarehouse('postgres', 'views');
  try {
    await loadSmallSite(t.warehouse);
    await runModels(t.warehouse);
    await t.warehouse.exec(
      'CREATE VIEW awarded_programs AS SELECT program_id, awarded, awarded_value FROM award_rates WHERE awarded > 0',
    );
    const before = await t.warehouse.query('SELECT * FROM awarded_programs ORDER BY program_id');
    expect(before.length).toBeGreaterThan(0);
    // New data: one more awarded application in program 1.
    await t.warehouse.exec(`UPDATE awards SET decision = 0, value = 10.00 WHERE decision = 1 AND program_id = 1`);
    await runModels(t.warehouse);
    const after = await t.warehouse.query('SELECT * FROM awarded_programs ORDER BY program_id');
    const fresh = await t.warehouse.query(
      'SELECT program_id, awarded, awarded_value FROM award_rates WHERE awarded > 0 ORDER BY program_id',
    );
    expect(after).toEqual(fresh);
    expect(after).not.toEqual(before);

    // A table left by an older version with other columns is replaced by the declared ones.
    await t.warehouse.exec('ALTER TABLE funding_flow ADD COLUMN retired_column text');
    await runModels(t.warehouse, { only: ['funding_flow'] });
    const columns = await t.warehouse.query(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = '${t.warehouse.analyticsSchema}' AND table_name = 'funding_flow' ORDER BY ordinal_position`,
    );
    const declared = loadModels()
      .find((m) => m.name === 'funding_flow')
      ?.columns.map((c) => c.name);
    expect(columns.map((c) => c.column_name)).toEqual(declared);
    const leftovers = await t.warehouse.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = '${t.warehouse.analyticsSchema}' AND table_name LIKE '\\_gf\\_next%'`,
    );
    expect(leftovers).toEqual([]);
  } finally {
    await t.cleanup();
  }
});

it('building the models of a new schema leaves the model tables of the warehouse in public alone', async () => {
  // Its own database: this test needs a warehouse in `public`, which the shared test database leaves to others.
  const database = `${clusterName('models')}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${database}`;
  try {
    for (const schema of ['public', 'second']) {
      const warehouse = await openWarehouse(url.toString(), { schema });
      try {
        await warehouse.migrate(tables);
        await load(warehouse, smallSite().data);
        await runModels(warehouse);
      } finally {
        await warehouse.close();
      }
    }
    const c = new pg.Client({ connectionString: url.toString() });
    await c.connect();
    try {
      const { rows } = await c.query<{ schemaname: string; n: string }>(
        `SELECT schemaname, count(*) AS n FROM pg_tables WHERE tablename = ANY($1) GROUP BY 1 ORDER BY 1`,
        [loadModels().map((m) => m.name)],
      );
      const count = String(loadModels().length);
      // Each in its own models' schema (analytics-schema.ts).
      expect(rows).toEqual([
        { schemaname: 'analytics', n: count },
        { schemaname: 'second_analytics', n: count },
      ]);
    } finally {
      await c.end();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
});
