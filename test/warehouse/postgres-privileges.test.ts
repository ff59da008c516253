/**
 * A shared company database where grantflow runs as a role of its own: no CREATE on the database (nor, since
 * Postgres 15, on `public`), and a schema the platform team created for it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { clusterName, postgresUrl } from '../support/postgres.ts';
import pg from 'pg';
import { ConfigError } from '../../src/util/errors.ts';
import { openWarehouse, warehouseMayHoldCredentials } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { migrationCount } from '../support/warehouse-fixtures.ts';

const url = postgresUrl;
const role = clusterName('priv');
const own = `${role}_own`;
const shared = `${role}_shared`;
const closed = `${role}_closed`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'Pw-${role}'`);
await admin.query(`CREATE SCHEMA ${own} AUTHORIZATION ${role}`);
await admin.query(`CREATE SCHEMA ${shared}`);
await admin.query(`GRANT USAGE ON SCHEMA ${shared} TO ${role}`);
await admin.query(`CREATE SCHEMA ${closed}`);
const roleUrl = (() => {
  const u = new URL(url);
  u.username = role;
  u.password = `Pw-${role}`;
  return u.toString();
})();

afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${own}, ${shared}, ${closed}, ${role}_new CASCADE`);
  await admin.query(`DROP OWNED BY ${role}`);
  await admin.query(`DROP ROLE ${role}`);
  await admin.end();
});

const openError = (schema: string): Promise<unknown> =>
  openWarehouse(roleUrl, { schema }).then(
    async (wh) => {
      await wh.close();
      return null;
    },
    (e: unknown) => e,
  );

describe('a Postgres role with no CREATE on the database', () => {
  it('syncs into the schema it owns', async () => {
    const { rows } = await admin.query<{ ok: boolean }>(
      `SELECT has_database_privilege($1, current_database(), 'CREATE') AS ok`,
      [role],
    );
    expect(rows[0]?.ok).toBe(false); // the premise: CREATE SCHEMA IF NOT EXISTS would be refused
    const wh = await openWarehouse(roleUrl, { schema: own });
    try {
      await wh.migrate([]);
      expect(await wh.query('SELECT count(*) AS n FROM _grantflow_migrations')).toEqual([{ n: migrationCount }]);
    } finally {
      await wh.close();
    }
  });

  it('a missing schema it may not create: ConfigError naming the grant, nothing created', async () => {
    const err = await openError(`${role}_new`);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(`has no schema ${role}_new and role ${role} may not create one`);
    expect((err as Error).message).toContain(`CREATE SCHEMA "${role}_new" AUTHORIZATION "${role}"`);
    expect((err as Error).message).not.toContain(`Pw-${role}`);
    const { rows } = await admin.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [`${role}_new`]);
    expect(rows).toEqual([]);
  });

  it.each([shared, 'public'])(
    'a schema it may not create tables in (%s): ConfigError naming the grant, not a failed migration',
    async (schema) => {
      const err = await openError(schema);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain(`schema ${schema}: role ${role} may not create tables in it`);
      expect((err as Error).message).toContain(`GRANT USAGE, CREATE ON SCHEMA "${schema}" TO "${role}"`);
      const { rows } = await admin.query(`SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tableowner = $2`, [
        schema,
        role,
      ]);
      expect(rows).toEqual([]);
    },
  );

  it('a schema it may not even use, with GRANTFLOW_* credentials: the first-run check leaves it to the open, which names the grant', async () => {
    // The sync's first-run check (is a rotated pair stored?) runs before the open: it must not turn the missing
    // privilege into "cannot connect".
    const settings = { warehouse: roleUrl, schema: closed, duckdbMemoryLimit: '256MB' };
    expect(await warehouseMayHoldCredentials(settings, 'https://site.example', silentLogger)).toBe(true);
    const err = await openError(closed);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(`GRANT USAGE, CREATE ON SCHEMA "${closed}" TO "${role}"`);
  });
});
