import pg from 'pg';
import { LockedError } from '../../util/errors.ts';
import { connectionConfig, describeConnectError, safeUrl } from './pool.ts';

/** First key of our advisory locks; the second is a hash of the schema, so schemas lock independently. */
const lockClass = 0x6766; // "gf"

/**
 * The run lock: a session-level advisory lock on a dedicated connection, held until `release` (or until the
 * process dies and Postgres ends the session).
 */
export async function takeAdvisoryLock(url: string, schema: string, owner: string): Promise<pg.Client> {
  const client = new pg.Client({
    ...connectionConfig(url, schema),
    application_name: `grantflow lock: ${owner}`.slice(0, 63),
  });
  client.on('error', () => undefined); // the lock ends with the session; nothing to do here
  try {
    await client.connect();
  } catch (e) {
    throw describeConnectError(url, e);
  }
  const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [
    lockClass,
    schema,
  ]);
  if (got.rows[0]?.ok === true) return client;
  const holder = await client.query<{ pid: number; application_name: string }>(
    `SELECT a.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objid = hashtext($2)::oid AND l.granted LIMIT 1`,
    [lockClass, schema],
  );
  await client.end().catch(() => undefined);
  const h = holder.rows[0];
  const who = h ? `backend pid ${h.pid}${h.application_name ? `, ${h.application_name}` : ''}` : 'another session';
  throw new LockedError(
    `warehouse ${safeUrl(url)} schema ${schema} is in use by another grantflow run (${who}); wait for it to finish or stop it, then retry`,
  );
}
