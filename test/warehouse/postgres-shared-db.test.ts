/**
 * A shared Postgres database where other clients create and drop schemas while grantflow migrates its own: the
 * migrations look only at the warehouse's schema, so a schema dropped meanwhile elsewhere cannot fail them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { clusterName, postgresUrl } from '../support/postgres.ts';
import pg from 'pg';
import { LockedError } from '../../src/util/errors.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { migrationCount } from '../support/warehouse-fixtures.ts';

const url = postgresUrl;
const prefix = clusterName('churn');
const admin = new pg.Client({ connectionString: url });
await admin.connect();
afterAll(async () => {
  const { rows } = await admin.query<{ nspname: string }>(
    `SELECT nspname FROM pg_namespace WHERE nspname LIKE '${prefix}%'`,
  );
  for (const r of rows) await admin.query(`DROP SCHEMA IF EXISTS "${r.nspname}" CASCADE`);
  await admin.end();
});

describe('Postgres warehouse on a shared database', () => {
  it('migrates while other clients drop schemas', async () => {
    let churning = true;
    const churn = (async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      for (let i = 0; churning; i++) {
        const name = `${prefix}_other_${i}`;
        await c.query(`CREATE SCHEMA "${name}"`);
        await c.query(`CREATE TABLE "${name}".t (id serial PRIMARY KEY)`);
        await c.query(`DROP SCHEMA "${name}" CASCADE`);
      }
      await c.end();
    })();
    try {
      for (let i = 0; i < 15; i++) {
        const wh = await openWarehouse(url, { schema: `${prefix}_own_${i}` });
        try {
          await wh.migrate([]);
          expect(await wh.query('SELECT count(*) AS n FROM _grantflow_migrations')).toEqual([{ n: migrationCount }]);
        } finally {
          await wh.close();
        }
      }
    } finally {
      churning = false;
      await churn;
    }
  });

  it('syncs starting at once on a new schema all open it; the run lock then lets one run', async () => {
    for (let i = 0; i < 10; i++) {
      const schema = `${prefix}_race_${i}`;
      const opened = await Promise.allSettled([1, 2, 3, 4].map(() => openWarehouse(url, { schema })));
      const whs = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      try {
        expect(opened.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))).toEqual([]);
        const locked = await Promise.allSettled(whs.map((wh, n) => wh.acquireLock(`sync ${n}`)));
        expect(locked.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of locked) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(LockedError);
      } finally {
        for (const wh of whs) await wh.close();
      }
    }
  });

  it('reads a mixed-case schema, not its lower-case twin, in unqualified queries', async () => {
    const name = `${prefix}_Mixed`;
    // A twin that an unquoted search_path would resolve to (Postgres folds unquoted names to lower case).
    const twin = name.toLowerCase();
    await admin.query(`CREATE SCHEMA "${twin}"`);
    await admin.query(`CREATE TABLE "${twin}"._grantflow_migrations (version int)`);
    const wh = await openWarehouse(url, { schema: name });
    try {
      await wh.migrate([]);
      const own = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM "${name}"._grantflow_migrations`);
      expect(Number(own.rows[0]?.n)).toBeGreaterThan(0);
      expect(await wh.query('SELECT count(*) AS n FROM _grantflow_migrations')).toEqual([
        { n: Number(own.rows[0]?.n) },
      ]);
    } finally {
      await wh.close();
    }
  });

  it("keeps a URL's own options and still resolves names in its schema, in UTC", async () => {
    const name = `${prefix}_opts`;
    const other = `${prefix}_opts_other`;
    await admin.query(`CREATE SCHEMA "${other}"`);
    const u = new URL(url);
    u.searchParams.set('options', `-c statement_timeout=654321 -c search_path=${other} -c TimeZone=Asia/Tokyo`);
    const wh = await openWarehouse(u.toString(), { schema: name });
    try {
      await wh.migrate([]);
      expect(
        await wh.query(
          `SELECT current_schema() AS s, current_setting('TimeZone') AS tz, current_setting('statement_timeout') AS t`,
        ),
      ).toEqual([{ s: name, tz: 'UTC', t: '654321ms' }]);
    } finally {
      await wh.close();
    }
  });

  it('keeps PGOPTIONS (which pg drops once options are given), the URL winning over it, and refuses a search_path there', async () => {
    const name = `${prefix}_pgopts`;
    const before = process.env.PGOPTIONS;
    process.env.PGOPTIONS = '-c work_mem=7MB -c statement_timeout=111111';
    try {
      const u = new URL(url);
      u.searchParams.set('options', '-c statement_timeout=654321');
      const wh = await openWarehouse(u.toString(), { schema: name });
      try {
        await wh.migrate([]);
        expect(
          await wh.query(
            `SELECT current_schema() AS s, current_setting('work_mem') AS m, current_setting('statement_timeout') AS t`,
          ),
        ).toEqual([{ s: name, m: '7MB', t: '654321ms' }]);
      } finally {
        await wh.close();
      }
      process.env.PGOPTIONS = `-c search_path=${prefix}_elsewhere`;
      await expect(openWarehouse(url, { schema: name })).rejects.toThrow(
        expect.objectContaining({ message: expect.stringMatching(/^PGOPTIONS must not set search_path/), exitCode: 2 }),
      );
    } finally {
      if (before === undefined) delete process.env.PGOPTIONS;
      else process.env.PGOPTIONS = before;
    }
  });
});
