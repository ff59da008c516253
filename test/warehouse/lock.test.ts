import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { clusterName, postgresUrl } from '../support/postgres.ts';
import { afterAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { ConfigError, LockedError } from '../../src/util/errors.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { catalog, harness, holdDuckDBFile, snapshot, thing, type Harness } from '../support/warehouse-fixtures.ts';

const cleanups: Harness[] = [];
afterAll(async () => {
  for (const h of cleanups) await h.cleanup();
});

describe('run lock', () => {
  it('DuckDB: a second holder in this process gets LockedError; the lock file goes on close', async () => {
    const h = await harness('duckdb', 'lock');
    cleanups.push(h);
    const a = await h.open();
    const b = await h.open();
    await a.acquireLock('sync A');
    expect(existsSync(`${h.target}.lock`)).toBe(true);
    await expect(b.acquireLock('sync B')).rejects.toThrow(LockedError);
    await expect(b.acquireLock('sync B')).rejects.toThrow(/is in use by another grantflow run \(pid \d+, sync A\)/);
    await a.close();
    expect(existsSync(`${h.target}.lock`)).toBe(false);
    await b.acquireLock('sync B');
    await b.close();
  });

  it('DuckDB: a file held open by a process that is not grantflow refuses with LockedError naming it as such', async () => {
    const h = await harness('duckdb', 'lockproc');
    cleanups.push(h);
    const wh = await h.open();
    await wh.close();
    const holder = await holdDuckDBFile(h.target);
    try {
      const err = await openWarehouse(h.target).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(LockedError);
      expect((err as Error).message).toContain(`held open by process ${holder.pid}, not a grantflow run`);
    } finally {
      holder.release();
    }
  });

  it("DuckDB read-only: each reader's own note names it, and a note of another live reader is left to it", async () => {
    const h = await harness('duckdb', 'readerlock');
    cleanups.push(h);
    await (await h.open()).close();
    const own = `${h.target}.lock.${process.pid}`;
    const reader = await openWarehouse(h.target, { readOnly: true });
    await reader.acquireLock('snapshot A');
    expect(JSON.parse(readFileSync(own, 'utf8'))).toMatchObject({ pid: process.pid, owner: 'snapshot A' });
    expect(existsSync(`${h.target}.lock`)).toBe(false);
    await reader.close();
    expect(existsSync(own)).toBe(false);

    const other = await holdDuckDBFile(h.target, { readOnly: true });
    try {
      const note = JSON.stringify({ pid: other.pid, owner: 'snapshot B' });
      writeFileSync(`${h.target}.lock.${other.pid}`, note);
      const second = await openWarehouse(h.target, { readOnly: true });
      await second.acquireLock('snapshot C');
      expect(existsSync(own)).toBe(true);
      await second.close();
      expect(existsSync(own)).toBe(false);
      expect(readFileSync(`${h.target}.lock.${other.pid}`, 'utf8')).toBe(note);
    } finally {
      await other.release();
    }
    // The writer that opens the file next has it to itself: a reader's note left behind (it was killed) is stale.
    const writer = await h.open();
    await writer.acquireLock('sync D');
    expect(existsSync(`${h.target}.lock.${other.pid}`)).toBe(false);
    await writer.close();
  });

  it('DuckDB: a stale lock file of a dead process is ignored', async () => {
    const h = await harness('duckdb', 'stale');
    cleanups.push(h);
    const wh = await h.open();
    writeFileSync(
      `${h.target}.lock`,
      JSON.stringify({ pid: 2 ** 22 + 12345, owner: 'old', startedAt: '2020-01-01T00:00:00Z' }),
    );
    await wh.acquireLock('new');
    await wh.close();
  });

  it('Postgres: the advisory lock refuses a second holder until the first closes', async () => {
    const h = await harness('postgres', 'lock');
    cleanups.push(h);
    const a = await h.open();
    const b = await h.open();
    await a.acquireLock('sync A');
    await expect(b.acquireLock('sync B')).rejects.toThrow(LockedError);
    await expect(b.acquireLock('sync B')).rejects.toThrow(
      /in use by another grantflow run \(backend pid \d+, grantflow lock: sync A\)/,
    );
    await a.close();
    await b.acquireLock('sync B');
    await b.close();
  });

  it('Postgres: a refusal names the grantflow holder even when the URL sets its own application_name', async () => {
    const h = await harness('postgres', 'lockname');
    cleanups.push(h);
    const url = `${postgresUrl}${postgresUrl.includes('?') ? '&' : '?'}application_name=bi-refresh`;
    const a = await openWarehouse(url, { schema: h.schema });
    const b = await openWarehouse(url, { schema: h.schema });
    try {
      await a.acquireLock('sync A');
      await expect(b.acquireLock('sync B')).rejects.toThrow(/\(backend pid \d+, grantflow lock: sync A\)/);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('Postgres: a refusal names the holder in this database, not one of the same schema in another', async () => {
    const h = await harness('postgres', 'otherdb');
    cleanups.push(h);
    const otherDb = clusterName('lockdb');
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${otherDb}`);
    const otherUrl = new URL(postgresUrl);
    otherUrl.pathname = `/${otherDb}`;
    const decoy = await openWarehouse(otherUrl.toString(), { schema: h.schema });
    const a = await h.open();
    const b = await h.open();
    try {
      // A grantflow run of the same schema name in another database of the server (its lock does not conflict).
      await decoy.acquireLock('decoy');
      await a.acquireLock('sync A');
      await expect(b.acquireLock('sync B')).rejects.toThrow(/\(backend pid \d+, grantflow lock: sync A\)/);
    } finally {
      await decoy.close();
      await a.close();
      await b.close();
      await admin.query(`DROP DATABASE ${otherDb}`);
      await admin.end();
    }
  });

  it("Postgres: the lock session outlives the role's idle_session_timeout while the run is busy elsewhere", async () => {
    const h = await harness('postgres', 'idle');
    cleanups.push(h);
    const u = new URL(postgresUrl);
    u.searchParams.set('options', '-c idle_session_timeout=200'); // as a role or database setting would do
    const wh = await openWarehouse(u.toString(), { schema: h.schema });
    try {
      await wh.acquireLock('sync idle');
      await wh.migrate(catalog);
      const unit = await wh.openLoad();
      await unit.append('things', [thing(1)]);
      // Fetching from the site while the lock session has nothing to do: longer than the timeout.
      await new Promise((r) => setTimeout(r, 800));
      const info = await unit.commit({
        runId: 'r1',
        extractedAt: '2024-01-01T00:00:00.000000Z',
        state: { stream: 'things', value: 1 },
      });
      expect(info.merged).toEqual({ things: 1 });
    } finally {
      await wh.close();
    }
  });

  it('Postgres: a holder whose lock session ends writes nothing more (another run may hold the lock now)', async () => {
    const h = await harness('postgres', 'lost');
    cleanups.push(h);
    const a = await h.open();
    await a.acquireLock('sync A');
    await a.migrate(catalog);
    const unit = await a.openLoad();
    await unit.append('things', [thing(1)]);
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    const b = await h.open();
    try {
      // What an operator's pg_terminate_backend, idle_session_timeout or a network cut does to the lock session.
      const holder = `FROM pg_locks WHERE locktype = 'advisory' AND objid = hashtext($1)::oid
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
      await admin.query(`SELECT pg_terminate_backend(pid) ${holder}`, [h.schema]);
      // The premise: the lock is free, so another run could take it (which drops A's staging tables) and write.
      await vi.waitFor(async () => expect((await admin.query(`SELECT pid ${holder}`, [h.schema])).rows).toEqual([]), {
        timeout: 5000,
        interval: 20,
      });
      const commit = unit.commit({
        runId: 'r1',
        extractedAt: '2024-01-01T00:00:00.000000Z',
        state: { stream: 'things', value: 1 },
      });
      await expect(commit).rejects.toMatchObject({ code: 'lock_lost', exitCode: 1 });
      await expect(commit).rejects.toThrow(/lost the run lock on .*stopped writing to it/);
      await b.acquireLock('sync B');
      expect(await b.query('SELECT count(*) AS n FROM things')).toEqual([{ n: 0 }]);
      expect(await b.readState('things')).toBeNull();
      await expect(a.saveRun({ runId: 'r1', startedAt: '2024-01-01T00:00:00Z', status: 'failed' })).rejects.toThrow(
        /lost the run lock/,
      );
      await expect(a.exec('CREATE TABLE model_x AS SELECT 1 AS x')).rejects.toThrow(/lost the run lock/);
      expect(await b.listRuns(1)).toEqual([]);
    } finally {
      await admin.end();
      await a.close();
      await b.close();
    }
  });
});

describe('closing', () => {
  it('a Postgres warehouse whose lock was refused closes every connection (the process can exit at once)', async () => {
    const h = await harness('postgres', 'close_refused');
    cleanups.push(h);
    const holder = await h.open();
    await holder.acquireLock('grantflow sync (pid 4242)');
    const sockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
    const before = sockets();
    const refused = await openWarehouse(h.target, { schema: h.schema });
    await expect(refused.acquireLock('grantflow models')).rejects.toThrow(LockedError);
    await refused.close();
    // Sockets finish closing a moment after `end`; an idle pooled one used to stay for the pool's 10 s timeout.
    await vi.waitFor(() => expect(sockets()).toBe(before), { timeout: 3000, interval: 20 });
    await holder.close();
  });
});

describe('unreachable or unwritable targets', () => {
  it('Postgres that refuses connections is a ConfigError without the password', async () => {
    const err = await openWarehouse('postgres://gf:s3cretpass@127.0.0.1:1/nope').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(
      /^cannot connect to Postgres warehouse postgres:\/\/gf@127\.0\.0\.1:1\/nope/,
    );
    expect((err as Error).message).not.toContain('s3cretpass');
  });

  it.each([
    'postgres://gf@127.0.0.1:1/nope?password=s3cretpass',
    'postgres://gf@127.0.0.1:1/nope?sslmode=disable&PASSWORD=s3cretpass',
    'postgres://gf:s3cretpass@127.0.0.1:1/nope?sslpassword=s3cretpass',
  ])('a password given as a query parameter stays out of the message: %s', async (url) => {
    const err = await openWarehouse(url).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('redacted');
    expect((err as Error).message).not.toContain('s3cretpass');
  });

  it('an unwritable DuckDB path is a ConfigError', async () => {
    const h = await harness('duckdb', 'unwritable');
    cleanups.push(h);
    const wh = await h.open();
    await wh.close();
    // A directory cannot be created under a regular file (the warehouse file itself).
    await expect(openWarehouse(`${h.target}/sub/warehouse.duckdb`)).rejects.toThrow(ConfigError);
  });
});

describe('Postgres commit whose backend is killed mid-commit', () => {
  it('leaves tables and state unchanged; the staged rows can be committed again', async () => {
    const h = await harness('postgres', 'kill');
    cleanups.push(h);
    const wh = await h.open();
    await wh.migrate(catalog);
    let unit = await wh.openLoad();
    await unit.append('things', [thing(1), thing(2)]);
    await unit.commit({
      runId: 'r1',
      extractedAt: '2024-01-01T00:00:00.000000Z',
      state: { stream: 'things', value: 1 },
    });
    const before = await snapshot(wh, 'things');

    unit = await wh.openLoad();
    await unit.append('things', [thing(1, { name: 'new' }), thing(3)]);
    await unit.append('notes', [{ id: 'n', thing_id: 1, kind: 'a', body: 'b', _raw: '{}' }]);
    const blocker = new pg.Client({ connectionString: postgresUrl });
    await blocker.connect();
    try {
      // Hold a lock on notes so the commit stops after merging things; then kill its backend.
      await blocker.query('BEGIN');
      await blocker.query(`LOCK TABLE "${h.schema}".notes IN ACCESS EXCLUSIVE MODE`);
      const committing = unit.commit({
        runId: 'r2',
        extractedAt: '2024-02-01T00:00:00.000000Z',
        state: { stream: 'things', value: 2 },
      });
      const outcome = committing.then(
        () => 'committed',
        (e: unknown) => e,
      );
      let victim: number | undefined;
      for (let i = 0; i < 200 && victim === undefined; i++) {
        // pg_stat_activity is a per-transaction snapshot inside the blocker's transaction: clear it each time.
        await blocker.query('SELECT pg_stat_clear_snapshot()');
        const r = await blocker.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%notes%' AND pid <> pg_backend_pid()`,
        );
        victim = r.rows[0]?.pid;
        if (victim === undefined) await new Promise((r) => setTimeout(r, 25));
      }
      expect(victim).toBeDefined();
      await blocker.query('SELECT pg_terminate_backend($1)', [victim]);
      expect(await outcome).toBeInstanceOf(Error);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect(await snapshot(wh, 'things')).toBe(before);
    expect(await wh.readState('things')).toBe(1);
    expect(await wh.query('SELECT count(*) AS n FROM notes')).toEqual([{ n: 0 }]);

    const info = await unit.commit({
      runId: 'r2',
      extractedAt: '2024-02-01T00:00:00.000000Z',
      state: { stream: 'things', value: 2 },
    });
    expect(info.merged).toEqual({ things: 2, notes: 1 });
    expect(await wh.readState('things')).toBe(2);
    await wh.close();
  });
});
