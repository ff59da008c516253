import pg from 'pg';
import type { RefreshMark } from '../types.ts';
import { connectionConfig, describeConnectError } from './pool.ts';

/** First key of the refresh marks' advisory locks (the run lock's is 0x6766); the second is a hash of the schema. */
const refreshClass = 0x6763;

/**
 * Refresh marks (see RefreshMark) of a Postgres schema that may not exist yet: a shared advisory lock on a session of
 * its own, so marks never wait for each other; waiting for the others is taking the same lock exclusively, which
 * Postgres grants once every shared holder has released it, or its session ended (a killed process).
 */
export async function markPostgresRefresh(url: string, schema: string): Promise<RefreshMark> {
  const client = new pg.Client(connectionConfig(url, schema));
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (e) {
    throw describeConnectError(url, e);
  }
  const key = [refreshClass, schema];
  try {
    // A statement_timeout or lock_timeout from the URL or PGOPTIONS would end the wait below before the other's save.
    await client.query(
      `SELECT set_config('statement_timeout', '0', false), set_config('lock_timeout', '0', false),
              pg_advisory_lock_shared($1, hashtext($2))`,
      key,
    );
  } catch (e) {
    await client.end().catch(() => undefined);
    throw e;
  }
  let ended = false;
  const end = async (): Promise<void> => {
    if (ended) return;
    ended = true;
    await client.end().catch(() => undefined);
  };
  return {
    async waitForOthers() {
      if (ended) return;
      await client.query('SELECT pg_advisory_unlock_shared($1, hashtext($2))', key);
      await client.query('SELECT pg_advisory_lock($1, hashtext($2))', key);
      await end();
    },
    release: end,
  };
}
