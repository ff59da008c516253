import { GrantflowError, ExitCode } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { SqlRunner } from '../sql-runner.ts';

/**
 * How grantflow waits for a table lock that readers hold. A statement that drops or alters a table (a model whose
 * columns changed, a column added by an upgrade) needs an ACCESS EXCLUSIVE lock, which waits for every open
 * transaction that read the table: an analyst's `BEGIN; SELECT ...` left open makes it wait without end, and while
 * it waits, Postgres queues every new reader of the table behind it. So each attempt waits at most `attemptMs`
 * (readers are held up at most that long), the wait is logged with who holds the table, and after `totalMs` the
 * statement fails naming them.
 */
export interface LockWait {
  readonly attemptMs: number;
  readonly totalMs: number;
}

export const defaultLockWait: LockWait = { attemptMs: 2_000, totalMs: 300_000 };

/** Log the wait again after this long, so a long wait is visible without a line every attempt. */
const logEveryMs = 30_000;

/** `lock_timeout` for the current transaction only: a statement before the ones that take the lock. */
export function lockTimeoutStatement(wait: LockWait): string {
  return `SELECT set_config('lock_timeout', '${Math.max(1, Math.round(wait.attemptMs))}ms', true)`;
}

export function isLockTimeout(e: unknown): boolean {
  return (e as { code?: unknown } | null)?.code === '55P03';
}

/**
 * Runs a statement about `table` (qualified), marking a lock timeout it meets with that table: an attempt of several
 * statements (a migration altering several tables) then tells withLockWait which table's holders to name.
 */
export async function onTable<T>(table: string, statement: () => Promise<T>): Promise<T> {
  try {
    return await statement();
  } catch (e) {
    if (isLockTimeout(e)) Object.assign(e as object, { lockedTable: table });
    throw e;
  }
}

function lockedTableOf(e: unknown): string | undefined {
  const table = (e as { lockedTable?: unknown }).lockedTable;
  return typeof table === 'string' ? table : undefined;
}

/** Sessions other than ours holding a lock on `table` (qualified): who an operator must ask to finish. */
export async function lockHolders(runner: SqlRunner, table: string): Promise<string> {
  const { rows } = await runner.run(
    `SELECT a.pid, a.usename AS role, a.application_name AS app, a.state,
            floor(extract(epoch FROM now() - coalesce(a.xact_start, a.query_start)))::int AS seconds
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'relation' AND l.relation = to_regclass($1) AND l.granted AND l.pid <> pg_backend_pid()
      ORDER BY a.xact_start NULLS LAST LIMIT 3`,
    [table],
  );
  if (rows.length === 0) return 'a session that has since let go';
  // Another role's state and times are hidden from a role without pg_read_all_stats: then pid, role and app only.
  const describe = (r: (typeof rows)[number]): string =>
    [
      `role ${String(r.role)}`,
      ...(r.app ? [String(r.app)] : []),
      ...(r.state !== null ? [`${String(r.state)} for ${String(r.seconds)} s`] : []),
    ].join(', ');
  return rows.map((r) => `backend pid ${String(r.pid)} (${describe(r)})`).join(', ');
}

/**
 * Runs `attempt` (which must set lockTimeoutStatement in its transaction, and roll back whole when a statement
 * fails) until it gets its locks, as described above. `what` names the work in log lines ("model award_rates");
 * `table` is the table whose lock it waits for, unless the timeout names another (see onTable).
 */
export async function withLockWait<T>(
  attempt: () => Promise<T>,
  options: { what: string; table: string; runner: SqlRunner; logger: Logger; wait?: LockWait },
): Promise<T> {
  const wait = options.wait ?? defaultLockWait;
  const started = Date.now();
  let lastLog = -Infinity;
  for (;;) {
    let table: string;
    try {
      const out = await attempt();
      if (lastLog > -Infinity) options.logger.info({ waitedMs: Date.now() - started }, `${options.what}: got its lock`);
      return out;
    } catch (e) {
      if (!isLockTimeout(e)) throw e;
      table = lockedTableOf(e) ?? options.table;
    }
    const waited = Date.now() - started;
    const holders = await lockHolders(options.runner, table);
    if (waited >= wait.totalMs) {
      throw new GrantflowError(
        `waited ${Math.round(waited / 1000)} s for a lock on ${table}, held by ${holders}, and gave up: ` +
          'an open transaction that read the table must end first (commit or close it), then rerun',
        ExitCode.runFailed,
        'lock_wait',
      );
    }
    if (waited - lastLog >= logEveryMs) {
      lastLog = waited;
      options.logger.warn(
        { table, holders, waitedMs: waited, giveUpAfterMs: wait.totalMs },
        `${options.what} waits for a lock on ${table} held by ${holders}; readers are let through between attempts`,
      );
    }
  }
}
