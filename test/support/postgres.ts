/**
 * The Postgres every test uses: the URL the global setup resolved (test/support/postgres-server.ts), one place for it,
 * and the per-test schemas and sessions built on it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** Where tests find Postgres; a closed port under `test:unit`, so a unit test that reaches for it fails loudly. */
export const postgresUrl: string = inject('postgresUrl') ?? 'postgres://postgres@127.0.0.1:1/test-unit-has-no-postgres';

/** The test server's URL as `role`, with the password the role tests give their roles (`Pw-<role>`). */
export function postgresUrlAs(role: string): string {
  const u = new URL(postgresUrl);
  u.username = role;
  u.password = `Pw-${role}`;
  return u.toString();
}

/**
 * A name for a schema, role or database a test file creates by name: `GRANTFLOW_TEST_PREFIX` (default `gf_`), the
 * file's `what`, and this process, so that parallel runs on one server (roles are cluster-wide) keep apart.
 */
export function clusterName(what: string): string {
  return `${process.env.GRANTFLOW_TEST_PREFIX ?? 'gf_'}${what}_${process.pid}`;
}

/** A fresh Postgres schema for one test; dropped by `drop`. */
export async function postgresSchema(): Promise<{ schema: string; url: string; drop: () => Promise<void> }> {
  const schema = `e2e_${randomBytes(4).toString('hex')}`;
  return { schema, url: postgresUrl, drop: () => dropPostgresSchema(schema) };
}

/** Drops a test's own schema, with everything in it. */
export async function dropPostgresSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    // The models' schema and the deidentified views' too (analytics-schema.ts); quoted, as the warehouse creates them.
    await client.query(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_analytics", "${schema}_deidentified" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * A second Postgres session, as an analyst's: it holds the locks grantflow must wait for, and its backend pid is what
 * grantflow's messages must name.
 */
export async function analystSession(): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return { client, pid: rows[0]?.pid ?? 0 };
}
