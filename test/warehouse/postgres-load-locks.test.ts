/**
 * On a shared database an analyst may leave `LOCK TABLE x IN ACCESS EXCLUSIVE MODE` (or an ALTER TABLE, a VACUUM
 * FULL) open on a table grantflow loads. A load must then neither wait without end nor in silence: it logs who holds
 * the table, gives up after its bound with nothing committed, and the staged rows commit once the lock is gone.
 */
import pg from 'pg';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { copyPostgresTable } from '../../src/warehouse/postgres/parquet-export.ts';
import { GrantflowError } from '../../src/util/errors.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/index.ts';
import {
  capturingLogger,
  dropPostgresSchema,
  postgresUrl as url,
  analystSession,
  clusterName,
} from '../support/harness.ts';
import { catalog, snapshot, thing } from '../support/warehouse-fixtures.ts';

const schema = clusterName('load_locks');
const { logger, lines } = capturingLogger();
let analyst: pg.Client;
let analystPid = 0;
const opened: Warehouse[] = [];

/** A warehouse holding the run lock, as a sync's does, whose loads wait at most `totalMs`. */
async function open(totalMs: number): Promise<Warehouse> {
  const wh = await openWarehouse(url, { schema, logger, loadLockWait: { attemptMs: 100, totalMs } });
  opened.push(wh);
  await wh.migrate(catalog);
  await wh.acquireLock('load lock test');
  return wh;
}

const plan = (run: string, state: number) => ({
  runId: run,
  extractedAt: '2024-02-01T00:00:00.000000Z',
  state: { stream: 'things', value: state },
});

const waitLines = (): Record<string, unknown>[] =>
  lines.filter((l) => l.level === 40 && String(l.msg).startsWith('load of stream things waits for a lock'));

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}

beforeAll(async () => {
  ({ client: analyst, pid: analystPid } = await analystSession());
});

beforeEach(() => {
  lines.length = 0;
});

afterAll(async () => {
  await analyst?.end();
  for (const wh of opened) await wh.close();
  await dropPostgresSchema(schema);
});

it('a table locked by another session: bounded attempts, the holder logged, then a clear failure with nothing committed; the staged rows commit once it is free', async () => {
  const wh = await open(500);
  const first = await wh.openLoad();
  await first.append('things', [thing(1)]);
  await first.commit(plan('r1', 1));
  const before = await snapshot(wh, 'things');

  const unit = await wh.openLoad();
  await unit.append('things', [thing(1, { name: 'new' }), thing(2)]);
  await unit.append('notes', [{ id: 'n', thing_id: 1, kind: 'a', body: 'b', _raw: '{}' }]);
  await analyst.query('BEGIN');
  try {
    // `things` merges first, then the merge into `notes` meets the lock.
    await analyst.query(`LOCK TABLE ${schema}.notes IN ACCESS EXCLUSIVE MODE`);
    const failed = await failure(unit.commit(plan('r2', 2)));
    expect(failed).toBeInstanceOf(GrantflowError);
    expect((failed as GrantflowError).exitCode).toBe(1);
    expect((failed as GrantflowError).message).toMatch(
      new RegExp(
        `^load of stream things rolled back, nothing of it committed: waited \\d+ s for a lock on "${schema}"."notes", ` +
          `held by backend pid ${analystPid} \\(role postgres`,
      ),
    );
    expect((failed as GrantflowError).message).toContain('must end first');
    expect(waitLines()[0]?.holders).toContain(`backend pid ${analystPid}`);
    // Rolled back whole: the merge into `things` and the stream's state too.
    expect(await snapshot(wh, 'things')).toBe(before);
    expect(await wh.readState('things')).toBe(1);
  } finally {
    await analyst.query('ROLLBACK');
  }

  // Its staging stayed: the same commit goes through once the lock is gone.
  const info = await unit.commit(plan('r2', 2));
  expect(info.merged).toEqual({ things: 2, notes: 1 });
  expect(await wh.readState('things')).toBe(2);
  expect(await wh.query('SELECT count(*) AS n FROM notes')).toEqual([{ n: 1 }]);

  // A later load of the run that meets a lock gives up at its first attempt, not after another bound.
  lines.length = 0;
  const later = await wh.openLoad();
  await later.append('things', [thing(3)]);
  await analyst.query('BEGIN');
  try {
    await analyst.query(`LOCK TABLE ${schema}.things IN ACCESS EXCLUSIVE MODE`);
    const again = await failure(later.commit(plan('r3', 3)));
    expect((again as GrantflowError).code).toBe('lock_wait');
    expect((again as GrantflowError).message).toContain(
      `lock on "${schema}"."things", held by backend pid ${analystPid}`,
    );
    expect(waitLines()).toEqual([]);
  } finally {
    await analyst.query('ROLLBACK');
  }
  await later.discard();
  await wh.close(); // lets the next test take the run lock
}, 30_000);

it('a lock released while a load waits: the load goes through, under the run lock, and says it got it', async () => {
  const wh = await open(60_000);
  const unit = await wh.openLoad();
  await unit.append('things', [thing(10)]);
  await analyst.query('BEGIN');
  let committing: Promise<unknown>;
  try {
    await analyst.query(`LOCK TABLE ${schema}.things IN ACCESS EXCLUSIVE MODE`);
    committing = unit.commit(plan('r4', 4));
    while (waitLines().length === 0) await new Promise((r) => setTimeout(r, 20));
    expect(waitLines()[0]?.holders).toContain(`backend pid ${analystPid}`);
  } finally {
    await analyst.query('COMMIT');
  }
  await committing;
  expect(lines.some((l) => l.msg === 'load of stream things: got its lock')).toBe(true);
  expect(await wh.readState('things')).toBe(4);
  expect(await wh.query('SELECT name FROM things WHERE id = 10')).toEqual([{ name: 'thing 10' }]);
}, 30_000);

it('saving a rotated credential pair outlasts the bound: the site has already replaced the old refresh token', async () => {
  for (const earlier of opened.splice(0)) await earlier.close(); // the run lock is one warehouse's at a time
  const wh = await open(200);
  const pair = { client_id: 'c', client_secret: 's', access_token: 'a', refresh_token: 'r', seeded_from: null };
  await analyst.query('BEGIN');
  let saving: Promise<unknown>;
  try {
    await analyst.query(`LOCK TABLE ${schema}._grantflow_credentials IN ACCESS EXCLUSIVE MODE`);
    saving = wh.writeCredentials('https://site.example', pair).then(
      () => 'saved',
      (e: unknown) => e,
    );
    // Several times the bound: a bounded save would have given up (and lost the pair) by now.
    await new Promise((r) => setTimeout(r, 1_000));
  } finally {
    await analyst.query('COMMIT');
  }
  expect(await saving).toBe('saved');
  expect(await wh.readCredentials('https://site.example')).toMatchObject({ refresh_token: 'r' });
}, 30_000);

it('statistics of a table locked by another session: one attempt, skipped with a warning naming the holder, analyzed once it is free', async () => {
  for (const earlier of opened.splice(0)) await earlier.close(); // the run lock is one warehouse's at a time
  const wh = await open(60_000);
  // Never analyzed, and autovacuum must not get to it first: it stays stale until refreshStatistics does.
  await wh.exec(`ALTER TABLE notes SET (autovacuum_enabled = false)`);
  const unit = await wh.openLoad();
  await unit.append('notes', [{ id: 'stats', thing_id: 1, kind: 'a', body: 'b', _raw: '{}' }]);
  await unit.commit(plan('r6', 6));
  const notes = `"${schema}"."notes"`;
  const unanalyzed = `SELECT reltuples < 0 AS never FROM pg_class WHERE oid = '${schema}.notes'::regclass`;
  await analyst.query('BEGIN');
  let refreshed: string[];
  try {
    await analyst.query(`LOCK TABLE ${schema}.notes IN ACCESS EXCLUSIVE MODE`);
    refreshed = await wh.refreshStatistics();
  } finally {
    await analyst.query('ROLLBACK');
  }
  expect(refreshed).not.toContain(notes);
  const skipped = lines.filter(
    (l) => l.level === 40 && String(l.msg).startsWith(`statistics of ${notes} not refreshed`),
  );
  expect(skipped).toHaveLength(1);
  expect(skipped[0]?.holders).toContain(`backend pid ${analystPid}`);
  expect(String(skipped[0]?.msg)).toContain('the next run analyzes it');
  expect(await wh.query(unanalyzed)).toEqual([{ never: true }]);

  // Still stale, it is analyzed by the next refresh.
  expect(await wh.refreshStatistics()).toContain(notes);
  expect(await wh.query(unanalyzed)).toEqual([{ never: false }]);
}, 30_000);

it('a data test of a table locked by another session: bounded attempts, the holder logged, then a failure naming it; later ones try once', async () => {
  for (const earlier of opened.splice(0)) await earlier.close();
  const wh = await open(500);
  const dataTestWaits = (): Record<string, unknown>[] =>
    lines.filter((l) => l.level === 40 && String(l.msg).startsWith("a data test's query waits for a lock"));
  await analyst.query('BEGIN');
  try {
    await analyst.query(`LOCK TABLE ${schema}.things IN ACCESS EXCLUSIVE MODE`);
    const failed = await failure(wh.queryOwnTables('SELECT count(*) AS n FROM things'));
    expect((failed as GrantflowError).code).toBe('lock_wait');
    expect((failed as GrantflowError).exitCode).toBe(1);
    expect((failed as GrantflowError).message).toMatch(
      new RegExp(
        `^a data test's query: waited \\d+ s for a lock on "${schema}"."things", held by backend pid ${analystPid} `,
      ),
    );
    expect(dataTestWaits()[0]?.holders).toContain(`backend pid ${analystPid}`);

    // A later data test meeting the lock gives up at its first attempt, not after another bound.
    lines.length = 0;
    const again = await failure(wh.queryOwnTables('SELECT count(*) AS n FROM things'));
    expect((again as GrantflowError).code).toBe('lock_wait');
    expect(dataTestWaits()).toEqual([]);
  } finally {
    await analyst.query('ROLLBACK');
  }
  // Once the lock is gone the same query goes through (test/e2e/postgres-two-schemas checks its narrowed path).
  expect(await wh.queryOwnTables('SELECT count(*) AS n FROM things')).toEqual(
    await wh.query(`SELECT count(*) AS n FROM ${schema}.things`),
  );
}, 30_000);

it("a snapshot's read of a model table locked by another session: bounded, and the failure names that table and its holder", async () => {
  for (const earlier of opened.splice(0)) await earlier.close();
  const wh = await open(500);
  // A model table: in the schema, though not in the catalog the warehouse was migrated with.
  await wh.exec(`CREATE TABLE ${schema}.thing_rates AS SELECT 1 AS id`);
  const instance = await DuckDBInstance.create(':memory:');
  const duck = await instance.connect();
  await analyst.query('BEGIN');
  try {
    await analyst.query(`LOCK TABLE ${schema}.thing_rates IN ACCESS EXCLUSIVE MODE`);
    const failed = await failure(
      copyPostgresTable(wh, duck, { schema, table: 'thing_rates', qualified: wh.qualify('thing_rates') }, 'staged'),
    );
    expect((failed as GrantflowError).code).toBe('lock_wait');
    expect((failed as GrantflowError).message).toMatch(
      new RegExp(
        `^a query of the warehouse: waited \\d+ s for a lock on "${schema}"."thing_rates", ` +
          `held by backend pid ${analystPid} \\(role postgres`,
      ),
    );
  } finally {
    await analyst.query('ROLLBACK');
    duck.closeSync();
    instance.closeSync();
  }
}, 30_000);
