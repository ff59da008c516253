/**
 * After a run's loads, statistics are refreshed only for tables where they are missing or outgrown, so a run that
 * changed little analyzes nothing; within a transaction, rows it just wrote count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterName, postgresUrl } from '../support/postgres.ts';
import pg from 'pg';
import { createPool, inTransaction, poolRunner } from '../../src/warehouse/postgres/pool.ts';
import { analyzeStale } from '../../src/warehouse/postgres/analyze-stale.ts';
import { silentLogger } from '../../src/util/logger.ts';

const url = postgresUrl;
const schema = clusterName('analyze');
const table = `"${schema}"."grows"`;
let pool: pg.Pool;

beforeAll(async () => {
  pool = createPool(url, schema, silentLogger);
  await poolRunner(pool).run(`CREATE SCHEMA "${schema}"`);
  await poolRunner(pool).run(`CREATE TABLE ${table} (id BIGINT PRIMARY KEY, body TEXT)`);
});
afterAll(async () => {
  await poolRunner(pool).run(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

const insert = (from: number, to: number): string =>
  `INSERT INTO ${table} SELECT g, repeat('x', 200) FROM generate_series(${from}, ${to}) AS g`;

async function analyzedRows(): Promise<number> {
  const { rows } = await poolRunner(pool).run(`SELECT reltuples::float8 AS n FROM pg_class WHERE oid = $1::regclass`, [
    table,
  ]);
  return Number(rows[0]?.n);
}

describe('analyzeStale', () => {
  it('analyzes a table never analyzed, then again only once it has outgrown its statistics', async () => {
    // In one transaction, as a commit does: rows it just wrote count.
    const first = await inTransaction(pool, async (runner) => {
      await runner.run(insert(1, 1000));
      return analyzeStale(runner, [table]);
    });
    expect(first).toEqual([table]);
    expect(await analyzedRows()).toBe(1000);

    const grownALittle = await inTransaction(pool, async (runner) => {
      await runner.run(insert(1001, 1500));
      return analyzeStale(runner, [table]);
    });
    expect(grownALittle).toEqual([]);
    expect(await analyzedRows()).toBe(1000);

    const outgrown = await inTransaction(pool, async (runner) => {
      await runner.run(insert(1501, 4000));
      return analyzeStale(runner, [table]);
    });
    expect(outgrown).toEqual([table]);
    expect(await analyzedRows()).toBe(4000);
  });

  it('analyzes several stale tables at once on separate connections, each exactly once', async () => {
    const names = ['a', 'b', 'c'].map((n) => `"${schema}"."several_${n}"`);
    for (const [i, name] of names.entries()) {
      await poolRunner(pool).run(`CREATE TABLE ${name} (id BIGINT) WITH (autovacuum_enabled = false)`);
      await poolRunner(pool).run(`INSERT INTO ${name} SELECT g FROM generate_series(1, ${100 * (i + 1)}) AS g`);
    }
    const analyzed = await analyzeStale(poolRunner(pool), names, 2);
    expect([...analyzed].sort()).toEqual(names);
    const { rows } = await poolRunner(pool).run(
      `SELECT relname, reltuples::bigint AS n, pg_stat_get_analyze_count(oid) AS analyzes FROM pg_class
       WHERE relnamespace = $1::regnamespace AND relname LIKE 'several_%' ORDER BY relname`,
      [schema],
    );
    expect(rows).toEqual([
      { relname: 'several_a', n: 100, analyzes: 1 },
      { relname: 'several_b', n: 200, analyzes: 1 },
      { relname: 'several_c', n: 300, analyzes: 1 },
    ]);
  });

  it('names an unknown table in its error rather than skipping it', async () => {
    await expect(analyzeStale(poolRunner(pool), [`"${schema}"."missing"`])).rejects.toThrow(/missing/);
  });
});
