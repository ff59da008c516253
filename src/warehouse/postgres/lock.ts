import pg from 'pg';
import { ExitCode, GrantflowError, LockedError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { SqlRunner } from '../sql-runner.ts';
import { connectionConfig, describeConnectError, safeUrl } from './pool.ts';

/** First key of our advisory locks; the second is a hash of the schema, so schemas lock independently. */
const lockClass = 0x6766; // "gf"

/**
 * The run lock: a session-level advisory lock on a dedicated connection (`pid` is its backend), held until the
 * connection ends (or until the process dies and Postgres ends the session).
 */
export async function takeAdvisoryLock(
  url: string,
  schema: string,
  owner: string,
): Promise<{ client: pg.Client; pid: number }> {
  const label = `grantflow lock: ${owner}`.slice(0, 63);
  const client = new pg.Client({ ...connectionConfig(url, schema), application_name: label });
  // The lock ends with the session; the warehouse listens for that once it holds the lock.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (e) {
    throw describeConnectError(url, e);
  }
  // The lock session sits idle for the whole run: a role's or database's idle_session_timeout (Postgres 14+) would
  // end it, and with it the lock, mid-run. Exempt this one session (a user may set it; older servers lack it).
  await client.query(
    `SELECT set_config('idle_session_timeout', '0', false) WHERE current_setting('idle_session_timeout', true) IS NOT NULL`,
  );
  // A URL's application_name replaces the one given at connect: set the label that a refusal quotes once connected.
  await client.query(`SELECT set_config('application_name', $1, false)`, [label]);
  const got = await client.query<{ ok: boolean; pid: number }>(
    'SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok, pg_backend_pid() AS pid',
    [lockClass, schema],
  );
  if (got.rows[0]?.ok === true) return { client, pid: got.rows[0].pid };
  const holder = await client.query<{ pid: number; application_name: string }>(
    // Advisory locks are per database: the same schema's lock in another database of the server is not ours.
    `SELECT a.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objid = hashtext($2)::oid AND l.objsubid = 2 AND l.granted
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) LIMIT 1`,
    [lockClass, schema],
  );
  await client.end().catch(() => undefined);
  const h = holder.rows[0];
  const who = h ? `backend pid ${h.pid}${h.application_name ? `, ${h.application_name}` : ''}` : 'another session';
  throw new LockedError(
    `warehouse ${safeUrl(url)} schema ${schema} is in use by another grantflow run (${who}); wait for it to finish or stop it, then retry`,
  );
}

/** Whether the backend `pid` (the lock session's) still holds the run lock of `schema`, as `runner` sees it. */
export async function holdsAdvisoryLock(runner: SqlRunner, schema: string, pid: number): Promise<boolean> {
  const { rows } = await runner.run(
    `SELECT 1 AS held FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objid = hashtext($2)::oid
        AND objsubid = 2 AND pid = $3 AND granted`,
    [lockClass, schema, pid],
  );
  return rows.length > 0;
}

/** Whether any session of this database holds the run lock of `schema`. */
export async function advisoryLockHeld(runner: SqlRunner, schema: string): Promise<boolean> {
  const { rows } = await runner.run(
    `SELECT 1 AS held FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objid = hashtext($2)::oid
        AND objsubid = 2 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [lockClass, schema],
  );
  return rows.length > 0;
}

/**
 * The run lock of one open warehouse. It is a session's advisory lock: when that session ends (pg_terminate_backend,
 * idle_session_timeout, a restart, a network cut), Postgres frees the lock and another sync may take the schema, see
 * this run still `running`, resume it and drop its staging tables. So once the lock was taken, every transaction
 * checks (`assertHeld`), last before its COMMIT, that the lock session still holds it, and run records and models are
 * not written once it is known lost: the run fails (exit 1) instead of writing alongside another one. Without a lock
 * (tests, commands that take none) nothing is checked.
 */
export class RunLock {
  private client: pg.Client | null = null;
  private pid = 0;
  /** Set when the lock's session ends while the warehouse is open: from then on, nothing is written. */
  private lost: GrantflowError | null = null;
  private released = false;

  constructor(
    private readonly url: string,
    private readonly schema: string,
    /** The warehouse's description, for the message once the lock is lost. */
    private readonly description: string,
    private readonly logger: Logger,
  ) {}

  get taken(): boolean {
    return this.client !== null;
  }

  /** Takes the lock (a LockedError naming the holder when another session has it); watches its session after. */
  async take(owner: string): Promise<void> {
    const { client, pid } = await takeAdvisoryLock(this.url, this.schema, owner);
    const lost = (reason: string): void => {
      if (this.released || this.lost) return;
      this.lost = this.lostError(reason);
      this.logger.error({ err: reason }, 'the run lock was lost: writing stops');
    };
    client.on('error', (e: Error) => lost(e.message.split('\n')[0] ?? ''));
    client.on('end', () => lost('connection closed'));
    this.client = client;
    this.pid = pid;
  }

  /** Throws once the lock is known lost; with `runner` (a transaction about to commit), asks Postgres first. */
  assertHeld = async (runner?: SqlRunner): Promise<void> => {
    if (!this.client) return;
    if (!this.lost && runner && !(await holdsAdvisoryLock(runner, this.schema, this.pid))) {
      this.lost ??= this.lostError('the lock is no longer held'); // the session's own error may come first
    }
    if (this.lost) throw this.lost;
  };

  private lostError(reason: string): GrantflowError {
    return new GrantflowError(
      `lost the run lock on ${this.description}: its Postgres session ended (${reason}), so another run may hold ` +
        'the warehouse now; stopped writing to it. Rerun to continue',
      ExitCode.runFailed,
      'lock_lost',
    );
  }

  /** Ends the lock's session (the warehouse is closing): its end is no longer a loss. */
  async release(): Promise<void> {
    this.released = true;
    if (this.client) await this.client.end().catch(() => undefined);
    this.client = null;
  }
}
