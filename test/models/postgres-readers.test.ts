/**
 * Analysts read the Postgres schema while grantflow rebuilds models. A model whose columns changed (an upgrade) is
 * dropped and replaced, which waits for every open transaction that read it: grantflow must not wait without end
 * nor in silence, and must not hold up other readers meanwhile.
 */
import pg from 'pg';
import { postgresUrl } from '../support/postgres.ts';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { runModels } from '../../src/models/index.ts';

import { openWarehouse, type Warehouse } from '../../src/warehouse/index.ts';

import { capturingLogger, dropPostgresSchema, analystSession, clusterName } from '../support/harness.ts';

import { loadSmallSite } from '../support/model-fixtures.ts';
import { tables } from '../../src/streams/registry.ts';

const schema = clusterName('readers');
const { logger, lines } = capturingLogger();
let warehouse: Warehouse;
let analyst: pg.Client;
let analystPid = 0;
const columnsOf = async (table: string): Promise<string[]> =>
  (
    await warehouse.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`,
      [warehouse.analyticsSchema, table],
    )
  ).map((r) => String(r.column_name));

beforeAll(async () => {
  warehouse = await openWarehouse(postgresUrl, { schema, logger });
  await warehouse.migrate(tables);
  await loadSmallSite(warehouse);
  await runModels(warehouse);
  ({ client: analyst, pid: analystPid } = await analystSession());
});

afterAll(async () => {
  await analyst?.end();
  await warehouse.close();
  await dropPostgresSchema(schema);
});

it('a model to drop while an analyst transaction has read it: waits in bounded attempts, logs who holds it, then gives up naming them', async () => {
  // An older version's table: other columns, so the rebuild must drop it.
  await warehouse.exec('ALTER TABLE funding_flow ADD COLUMN retired_column text');
  await analyst.query('BEGIN');
  await analyst.query(`SELECT count(*) FROM ${schema}_analytics.funding_flow`);
  try {
    const failed = await runModels(warehouse, {
      only: ['funding_flow'],
      lockWait: { attemptMs: 100, totalMs: 500 },
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(failed?.message).toMatch(
      new RegExp(
        `model funding_flow failed on postgres: waited \\d+ s for a lock on "${schema}_analytics"."funding_flow", held by backend pid ${analystPid} \\(role postgres`,
      ),
    );
    expect(failed?.message).toContain('must end first');
    const waits = lines.filter(
      (l) => l.level === 40 && String(l.msg).startsWith('model funding_flow waits for a lock'),
    );
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0]?.holders).toContain(`backend pid ${analystPid}`);
    // Nothing half done: the old table stands, no replacement is left aside, and the analyst reads on.
    expect(await columnsOf('funding_flow')).toContain('retired_column');
    expect(
      await warehouse.query(`SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename LIKE '\\_gf\\_next%'`, [
        warehouse.analyticsSchema,
      ]),
    ).toEqual([]);
    await analyst.query(`SELECT count(*) FROM ${schema}_analytics.funding_flow`);
  } finally {
    await analyst.query('COMMIT');
  }
  // Once the transaction ended, the rebuild goes through.
  await runModels(warehouse, { only: ['funding_flow'], lockWait: { attemptMs: 100, totalMs: 500 } });
  expect(await columnsOf('funding_flow')).not.toContain('retired_column');
}, 60_000);

it('a rebuild that replaces rows (columns unchanged) does not wait for an analyst transaction at all', async () => {
  await analyst.query('BEGIN');
  await analyst.query(`SELECT count(*) FROM ${schema}_analytics.award_rates`);
  try {
    lines.length = 0;
    await runModels(warehouse, { only: ['award_rates'], lockWait: { attemptMs: 100, totalMs: 500 } });
    expect(lines.filter((l) => String(l.msg).includes('waits for a lock'))).toEqual([]);
  } finally {
    await analyst.query('COMMIT');
  }
});
