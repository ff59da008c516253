/**
 * The soft deletes of a fan-out chunk anti-join a table's scope (a parent range and list, live, not references)
 * against its staging. Postgres multiplies those predicates' selectivities down to ~1 row and then picked a nested
 * loop that scanned the staging once per stored row; the Postgres staging runs them with nested loops off, which
 * must hold whether the target's statistics are stale or missing (loads take none: see refreshStatistics).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterName, postgresUrl } from '../support/postgres.ts';
import pg from 'pg';
import { createPool, inTransaction, poolRunner } from '../../src/warehouse/postgres/pool.ts';
import { PostgresStaging } from '../../src/warehouse/postgres/staging.ts';
import { softDeleteSql } from '../../src/warehouse/merge-sql.ts';
import type { TableDef } from '../../src/normalize/table-def.ts';
import { silentLogger } from '../../src/util/logger.ts';

const url = postgresUrl;
const schema = clusterName('antijoin');
const notes: TableDef = {
  name: 'notes',
  kind: 'entity',
  description: 'notes of applications',
  primaryKey: ['id'],
  columns: [
    { name: 'id', type: 'bigint', notNull: true, description: '' },
    { name: 'application_id', type: 'bigint', description: '' },
  ],
};
let pool: pg.Pool;

/**
 * Ten thousand applications with one note each, and one chunk of 2,000 applications staged again. `analyzedAt`:
 * the target's statistics were taken when it held that many rows (as after an earlier run), or never (a first
 * load, or the staging table: loads take no statistics).
 */
async function notesAndStaging(name: string, analyzedAt: number | null): Promise<{ target: string; staging: string }> {
  const run = poolRunner(pool).run;
  const target = `"${schema}"."${name}"`;
  const staging = `"${schema}"."${name}_staged"`;
  await run(
    `CREATE TABLE ${target} (id BIGINT PRIMARY KEY, application_id BIGINT, _raw TEXT, _deleted_at TIMESTAMPTZ, ` +
      `_ref_only BOOLEAN NOT NULL DEFAULT false) WITH (autovacuum_enabled = false)`,
  );
  const insert = (from: number, to: number): string =>
    `INSERT INTO ${target} (id, application_id, _raw) SELECT g, g, '{}' FROM generate_series(${from}, ${to}) AS g`;
  if (analyzedAt === null) await run(insert(1, 10_000));
  else {
    await run(insert(1, analyzedAt));
    await run(`ANALYZE ${target}`);
    await run(insert(analyzedAt + 1, 10_000));
  }
  await run(
    `CREATE TABLE ${staging} WITH (autovacuum_enabled = false) AS ` +
      `SELECT id, application_id, _raw FROM ${target} WHERE application_id > 8000`,
  );
  return { target, staging };
}

beforeAll(async () => {
  pool = createPool(url, schema, silentLogger);
  await poolRunner(pool).run(`CREATE SCHEMA "${schema}"`);
});
afterAll(async () => {
  await poolRunner(pool).run(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

describe('Postgres soft deletes', () => {
  it.each([
    ['statistics from when the table was smaller', 2000],
    ['no statistics at all', null],
  ] as const)('hash the staging rows with %s, and restore the planner setting', async (_, analyzedAt) => {
    const { target, staging } = await notesAndStaging(analyzedAt === null ? 'fresh_notes' : 'notes', analyzedAt);
    const parentIds = Array.from({ length: 2000 }, (_, i) => 8001 + i);
    const st = softDeleteSql(
      notes,
      target,
      [staging],
      { table: 'notes', parentColumn: 'application_id', parentIds },
      '2026-01-01T00:00:00Z',
    );
    if (!st) throw new Error('expected a soft-delete statement');
    const backend = new PostgresStaging(pool, schema, () => []);
    const seen = await inTransaction(pool, async (runner) => {
      let plan = '';
      let deleted = -1;
      await backend.antiJoins(runner, async () => {
        const { rows } = await runner.run(`EXPLAIN ${st.sql}`, st.params);
        plan = rows.map((r) => String(r['QUERY PLAN'])).join('\n');
        deleted = (await runner.run(st.sql, st.params)).changes;
      });
      const { rows } = await runner.run(`SELECT current_setting('enable_nestloop') AS setting`);
      return { plan, deleted, after: rows[0]?.setting };
    });
    expect(seen.plan).toMatch(/Anti Join/);
    expect(seen.plan).not.toMatch(/Nested Loop/);
    // Every stored note of the chunk is staged again: nothing is deleted.
    expect(seen.deleted).toBe(0);
    expect(seen.after).toBe('on');
  });
});
