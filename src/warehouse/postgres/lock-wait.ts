import { GrantflowError, ExitCode, throwIfStopped } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { SqlRunner } from '../sql-runner.ts';
import type { LockWait } from '../types.ts';
import { isLockTimeout } from './sql-dialect.ts';

export type { LockWait };

export const defaultLockWait: LockWait = { attemptMs: 2_000, totalMs: 300_000 };

/**
 * After a stop (SIGINT/SIGTERM), for what must still be written (a run's final record): long enough for a brief
 * lock (a manual VACUUM, a report's transaction) to pass, short enough that the command still ends in seconds.
 */
export const stoppingLockWait: LockWait = { attemptMs: 1_000, totalMs: 5_000 };

/** Each of the two bounds the shorter (a test's short wait shortens the stopping one too). */
export function shorter(a: LockWait, b: LockWait): LockWait {
  return { attemptMs: Math.min(a.attemptMs, b.attemptMs), totalMs: Math.min(a.totalMs, b.totalMs) };
}

/** Log the wait again after this long, so a long wait is visible without a line every attempt. */
const logEveryMs = 30_000;

/** `lock_timeout` for the current transaction only: a statement before the ones that take the lock. */
export function lockTimeoutStatement(wait: LockWait): string {
  return `SELECT set_config('lock_timeout', '${Math.max(1, Math.round(wait.attemptMs))}ms', true)`;
}

function lockedTableOf(e: unknown): string | undefined {
  const table = (e as { lockedTable?: unknown }).lockedTable;
  return typeof table === 'string' ? table : undefined;
}

/**
 * Modes that block a load's writes (ROW EXCLUSIVE): an analyst's `LOCK TABLE`, `ALTER TABLE`, `VACUUM FULL`,
 * `CREATE INDEX`. Their holders are named before mere readers, who block only an exclusive lock.
 */
const blockingWrites = ['ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'];

/**
 * Sessions other than ours holding a lock on one of `tables` (qualified), those blocking writes first: the table and
 * who an operator must ask to finish.
 */
export async function lockHolders(
  runner: SqlRunner,
  tables: readonly string[],
): Promise<{ table: string; holders: string }> {
  const { rows } = await runner.run(
    `SELECT t.name AS table_name, a.pid, a.usename AS role, a.application_name AS app, a.state,
            floor(extract(epoch FROM now() - coalesce(a.xact_start, a.query_start)))::int AS seconds
       FROM unnest($1::text[]) WITH ORDINALITY AS t(name, n)
       JOIN pg_locks l ON l.locktype = 'relation' AND l.relation = to_regclass(t.name)
       JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.granted AND l.pid <> pg_backend_pid()
      ORDER BY l.mode = ANY($2::text[]) DESC, t.n, a.xact_start NULLS LAST LIMIT 3`,
    [`{${tables.map((t) => `"${t.replace(/["\\]/g, '\\$&')}"`).join(',')}}`, `{${blockingWrites.join(',')}}`],
  );
  const table = rows[0] ? String(rows[0].table_name) : (tables[0] ?? '');
  const ofTable = rows.filter((r) => String(r.table_name) === table);
  if (ofTable.length === 0) return { table, holders: 'a session that has since let go' };
  // Another role's state and times are hidden from a role without pg_read_all_stats: then pid, role and app only.
  const describe = (r: (typeof rows)[number]): string =>
    [
      `role ${String(r.role)}`,
      ...(r.app ? [String(r.app)] : []),
      ...(r.state !== null ? [`${String(r.state)} for ${String(r.seconds)} s`] : []),
    ].join(', ');
  return { table, holders: ofTable.map((r) => `backend pid ${String(r.pid)} (${describe(r)})`).join(', ') };
}

/** Who must finish, in a message that gives up waiting (see withLockWait's `holdsIt`). */
const readerHoldsIt = 'an open transaction that read the table';

/**
 * Runs `attempt` (which must set lockTimeoutStatement in its transaction, and roll back whole when a statement
 * fails) until it gets its locks, as described above. `what` names the work in log lines ("model award_rates");
 * `table` is the table whose lock it waits for, unless the timeout names another (see onTable in migrations.ts), or the tables it
 * may wait for (a load's), or a lookup of them (a query's, see PostgresWarehouse.query), whose holders are looked up. `holdsIt` says who typically holds the lock it meets. Once
 * `signal` is aborted (SIGINT/SIGTERM), it waits no further: the attempt under way ends within `attemptMs`, rolled
 * back, and the stop's reason is thrown, so a stopped run does not sit out the bound. Work a stop must still do (the
 * run's final record) passes `afterStop`: from the stop on, it waits under that short bound instead, counted from the
 * stop, and gives up as at the end of the normal bound. `attempt` is given the bound in force, for its lock_timeout.
 */
export async function withLockWait<T>(
  attempt: (wait: LockWait) => Promise<T>,
  options: {
    what: string;
    table: string | readonly string[] | (() => Promise<readonly string[]>);
    runner: SqlRunner;
    logger: Logger;
    wait?: LockWait;
    holdsIt?: string;
    signal?: AbortSignal;
    afterStop?: LockWait;
  },
): Promise<T> {
  const { signal, afterStop } = options;
  const started = Date.now();
  // When the stop came: the short bound counts from it, not from when an attempt under way ended.
  let stoppedAt = signal?.aborted ? started : undefined;
  const onStop = (): void => void (stoppedAt ??= Date.now());
  signal?.addEventListener('abort', onStop, { once: true });
  const bound = (): LockWait => (stoppedAt !== undefined && afterStop ? afterStop : (options.wait ?? defaultLockWait));
  let lastLog = -Infinity;
  try {
    for (;;) {
      const wait = bound();
      let tables: readonly string[];
      try {
        const out = await attempt(wait);
        if (lastLog > -Infinity)
          options.logger.info({ waitedMs: Date.now() - started }, `${options.what}: got its lock`);
        return out;
      } catch (e) {
        if (!isLockTimeout(e)) throw e;
        const marked = lockedTableOf(e);
        const { table } = options;
        tables =
          marked !== undefined
            ? [marked]
            : typeof table === 'string'
              ? [table]
              : typeof table === 'function'
                ? await table()
                : table;
      }
      if (!afterStop) throwIfStopped(signal);
      const stopping = stoppedAt !== undefined && afterStop !== undefined;
      const waited = Date.now() - started;
      const inBound = stopping ? Date.now() - (stoppedAt ?? started) : waited;
      const { totalMs } = bound();
      const { table, holders } = await lockHolders(options.runner, tables);
      if (inBound >= totalMs) {
        throw new GrantflowError(
          `waited ${Math.round(waited / 1000)} s for a lock on ${table}, held by ${holders}, and gave up` +
            `${stopping ? ' (stopping)' : ''}: ` +
            `${options.holdsIt ?? readerHoldsIt} must end first (commit or close it), then rerun`,
          ExitCode.runFailed,
          'lock_wait',
        );
      }
      // A stop makes the wait short: say so once, as the command seems to hang on after the signal otherwise.
      if (waited - lastLog >= logEveryMs || (stopping && lastLog < (stoppedAt ?? started) - started)) {
        lastLog = waited;
        options.logger.warn(
          { table, holders, waitedMs: waited, giveUpAfterMs: stopping ? waited - inBound + totalMs : totalMs },
          `${options.what} waits for a lock on ${table} held by ${holders}` +
            (stopping
              ? `; stopping: gives up in ${Math.ceil((totalMs - inBound) / 1000)} s`
              : options.holdsIt === undefined
                ? '; readers are let through between attempts'
                : ''),
        );
      }
    }
  } finally {
    signal?.removeEventListener('abort', onStop);
  }
}

/** Who holds a lock that a load or a bookkeeping write waits for (see withLockWait's `holdsIt`). */
const writeBlockers = 'the session holding it (LOCK TABLE, ALTER TABLE, VACUUM FULL, CREATE INDEX)';

/** The lock waits of one open warehouse: withLockWait on its connections, logger and stop signal. */
export class WarehouseLockWaits {
  /**
   * Kinds of bounded work (loads, data tests) of which one gave up waiting for a lock: later ones of the kind try
   * once, so a command with many of them behind the same lock still ends within one bound.
   */
  private readonly gaveUp = new Set<string>();

  constructor(
    private readonly runner: () => SqlRunner,
    private readonly logger: Logger,
    /** The bound of loads and of the statements bounded like them. */
    readonly loadWait: LockWait,
    /** Aborted when the command is told to stop: a wait then ends at its next attempt. */
    private readonly stop: AbortSignal | undefined,
  ) {}

  /**
   * `step` is given the `lock_timeout` statement of one attempt. `holdsIt` names who typically holds the lock
   * (default: a reader's open transaction).
   */
  wait<T>(
    what: string,
    table: string | readonly string[] | (() => Promise<readonly string[]>),
    step: (lockTimeout: string) => Promise<T>,
    wait: LockWait,
    holdsIt?: string,
    afterStop?: LockWait,
  ): Promise<T> {
    return withLockWait((inForce) => step(lockTimeoutStatement(inForce)), {
      what,
      table,
      runner: this.runner(),
      logger: this.logger,
      wait,
      ...(holdsIt === undefined ? {} : { holdsIt }),
      ...(afterStop === undefined ? {} : { afterStop }),
      signal: this.stop,
    });
  }

  /**
   * A statement outside load transactions (the run's record, a stream's state, the parents a fan-out reads) meets
   * another session's lock (`LOCK TABLE`, `ALTER TABLE`, `VACUUM FULL`) as a load does: it is tried in attempts under
   * `lock_timeout`, logging who holds the table, and gives up after the loads' bound (or at a stop) naming them,
   * instead of waiting without end. `step` runs in a transaction of its own, given the statement that bounds it.
   */
  async bounded<T>(
    what: string,
    tables: readonly string[] | (() => Promise<readonly string[]>),
    step: (lockTimeout: string) => Promise<T>,
    options: { kind?: string; gaveUpAs?: string; afterStop?: LockWait } = {},
  ): Promise<T> {
    const once = options.kind !== undefined && this.gaveUp.has(options.kind);
    const wait = once ? { ...this.loadWait, totalMs: 0 } : this.loadWait;
    try {
      return await this.wait(what, tables, step, wait, writeBlockers, options.afterStop);
    } catch (e) {
      if (!(e instanceof GrantflowError) || e.code !== 'lock_wait') throw e;
      if (options.kind !== undefined) this.gaveUp.add(options.kind);
      throw new GrantflowError(`${options.gaveUpAs ?? what}: ${e.message}`, e.exitCode, e.code);
    }
  }
}
