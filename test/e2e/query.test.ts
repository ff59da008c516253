/**
 * Reading a warehouse from the CLI, on both engines: `grantflow query` (one read-only statement, as a table, CSV or
 * JSON) and `status`, on a portfolio of two simulated sites, each site picked by `--pipeline FILE --site NAME` or by
 * `--schema site_<name>`. In process (runQuery, runStatus), bar two spawned CLIs for the exit codes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runQuery } from '../../src/cli/commands/query.ts';
import { runStatus } from '../../src/cli/commands/status.ts';
import { siteSchema, type PortfolioSite } from '../../src/config/portfolio.ts';
import { settingsSchema } from '../../src/config/settings.ts';
import { runPortfolio } from '../../src/pipeline/portfolio.ts';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { runCli, startSite, tempDir, writeCredentials } from '../support/harness.ts';
import { clusterName, postgresUrl } from '../support/postgres.ts';

const names = ['north', 'south'] as const;
let sims: Record<(typeof names)[number], SimulatorHandle>;
let work: Awaited<ReturnType<typeof tempDir>>;
/** A database of its own: a portfolio's views are in schema `portfolio`, which portfolio.test.ts uses too. */
const database = clusterName('query');
const databaseUrl = (() => {
  const url = new URL(postgresUrl);
  url.pathname = `/${database}`;
  return url.toString();
})();

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  sims = { north: await startSite({ scale: 'tiny', seed: 71 }), south: await startSite({ scale: 'tiny', seed: 72 }) };
  work = await tempDir('grantflow-query-');
  await admin(`DROP DATABASE IF EXISTS ${database}`);
  await admin(`CREATE DATABASE ${database}`);
}, 60_000);

afterAll(async () => {
  for (const sim of Object.values(sims ?? {})) await sim.close();
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await work?.remove();
});

describe.each(['duckdb', 'postgres'] as const)('reading a portfolio (%s)', (dialect) => {
  let warehouse: string;
  let pipeline: string;
  /** Each site's run id and live applications, read by a second path (the warehouse opened on its schema). */
  const site = {} as Record<(typeof names)[number], { runId: string; applications: number }>;
  const query = (sql: string, options: Record<string, unknown> = {}, width?: number): Promise<string> =>
    runQuery(sql, { warehouse, logLevel: 'silent', ...options }, width);

  beforeAll(async () => {
    const dir = join(work.path, dialect);
    await mkdir(dir);
    // Named as docs/portfolio.md names it, so the catalog DuckDB would name after the file is `portfolio` too.
    warehouse = dialect === 'duckdb' ? join(dir, 'portfolio.duckdb') : databaseUrl;
    const sites: PortfolioSite[] = [];
    for (const name of names)
      sites.push({
        name,
        site: sims[name].url,
        credentials: await writeCredentials(sims[name], join(dir, `${name}.json`)),
      });
    const result = await runPortfolio({
      settings: settingsSchema.parse({ warehouse, rate: 1000, landRaw: false, snapshot: false, logLevel: 'silent' }),
      sites,
      run: sites,
      logger: silentLogger,
    });
    expect(result.exitCode, result.lines.join('\n')).toBe(0);
    pipeline = join(dir, 'portfolio.json');
    await writeFile(pipeline, JSON.stringify({ sites, warehouse }));
    for (const outcome of result.sites) {
      const name = outcome.site.name as (typeof names)[number];
      const schema = siteSchema(name);
      const w = await openWarehouse(warehouse, { schema, duckdbSchema: schema, existingOnly: true, readOnly: true });
      try {
        const [row] = await w.query(`SELECT count(*) AS n FROM ${w.qualify('applications')}`);
        site[name] = { runId: outcome.result!.runId, applications: Number(row?.n) };
      } finally {
        await w.close();
      }
    }
  }, 180_000);

  it('query prints a site’s rows as a table, picked by --schema or by --pipeline --site', async () => {
    const sql = 'select count(*) as n from applications';
    for (const name of names) {
      const bySchema = await query(sql, { schema: siteSchema(name) });
      expect(bySchema).toBe(
        `${'n'.padStart(String(site[name].applications).length)}\n${site[name].applications}\n(1 row)\n`,
      );
      expect(await query(sql, { pipeline, site: name })).toBe(bySchema);
    }
  });

  it('query without a site reads the portfolio views; models resolve unqualified', async () => {
    const out = await query('select site, count(*) as n from applications group by site order by site', {
      pipeline,
      format: 'json',
    });
    expect(JSON.parse(out)).toEqual(names.map((name) => ({ site: name, n: site[name].applications })));
    const rates = JSON.parse(
      await query('select count(*) as n from award_rates', { pipeline, site: 'north', format: 'json' }),
    );
    expect(rates[0].n).toBeGreaterThan(0);
  });

  it('query --format json keeps exact numbers, NULL and booleans; csv tells NULL from an empty string', async () => {
    const big = '12345678901234567890';
    const sql = `select cast(${big} as decimal(38,0)) as big, cast(1.50 as decimal(10,2)) as amount, null as nothing, '' as empty, 'a,"b' as text, true as yes`;
    const schema = siteSchema('north');
    expect(await query(sql, { schema, format: 'json' })).toBe(
      `[\n  {"big": ${big}, "amount": 1.50, "nothing": null, "empty": "", "text": "a,\\"b", "yes": true}\n]\n`,
    );
    expect(await query(sql, { schema, format: 'csv' })).toBe(
      `big,amount,nothing,empty,text,yes\r\n${big},1.50,,"","a,""b",true\r\n`,
    );
    const table = await query(sql, { schema }, 50);
    for (const line of table.split('\n')) expect([...line].length).toBeLessThanOrEqual(50);
    expect(table).toMatch(/^1234\d*… +1\.50 +∅ {2,}a,"b +true$/m);
  });

  it('query refuses a write, a second statement and bad SQL with one line each, and writes nothing', async () => {
    const schema = siteSchema('north');
    const refused = async (sql: string): Promise<string> => {
      const error = await query(sql, { schema }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, sql).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message.split('\n'), sql).toHaveLength(1);
      return message;
    };
    expect(await refused('delete from applications')).toMatch(/only a statement that reads/);
    expect(await refused('create table scratch (a int)')).toMatch(/only a statement that reads/);
    expect(await refused('select 1; delete from applications')).toMatch(/one statement at a time/);
    expect(await refused('select * from no_such_table')).toMatch(/^SQL error: .*no_such_table/);
    expect(await refused('  ')).toBe('no SQL statement given');
    expect(await query('select count(*) as n from applications', { schema, format: 'json' })).toBe(
      `[\n  {"n": ${site.north.applications}}\n]\n`,
    );
  });

  it('status reads a site by --schema or --pipeline --site, and lists the sites when none is picked', async () => {
    for (const name of names) {
      const other = names.find((n) => n !== name)!;
      const out = (await runStatus({ warehouse, schema: siteSchema(name), logLevel: 'silent' }, 79))!;
      expect(out).toContain(site[name].runId);
      expect(out).not.toContain(site[other].runId);
      expect(out).toMatch(new RegExp(`^ {2}applications +${site[name].applications} +0$`, 'm'));
      for (const line of out.split('\n').slice(1)) expect([...line].length, line).toBeLessThanOrEqual(79);
      expect(await runStatus({ pipeline, site: name, logLevel: 'silent' }, 79)).toBe(out);
    }
    for (const options of [{ warehouse }, { pipeline }])
      await expect(runStatus({ ...options, logLevel: 'silent' }, undefined)).rejects.toThrow(
        /is a portfolio of 2 sites \(north, south\): pick one with --site NAME/,
      );
    await expect(runStatus({ pipeline, site: 'west', logLevel: 'silent' }, undefined)).rejects.toThrow(
      /--site "west" is not a site of the pipeline file; its sites: north, south/,
    );
  });

  it('status and query say when the schema named does not exist', async () => {
    await expect(runStatus({ warehouse, schema: 'site_west', logLevel: 'silent' }, undefined)).rejects.toThrow(
      /no schema site_west/,
    );
    await expect(query('select 1', { schema: 'site_west' })).rejects.toThrow(/no schema site_west/);
  });

  if (dialect === 'duckdb')
    it('the CLI: query prints the table (exit 0); bad SQL and a portfolio status are exit 2', async () => {
      const target = ['--warehouse', warehouse, '--schema', siteSchema('north')];
      const ok = await runCli(['query', ...target, 'select count(*) as n from applications']);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(new RegExp(`^ *n\\n${site.north.applications}\\n\\(1 row\\)\\n$`));
      const bad = await runCli(['query', ...target, 'select * from nope']);
      expect(bad.code).toBe(2);
      expect(bad.stdout).toBe('');
      expect(bad.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^grantflow: SQL error: .*nope/)]);
      const status = await runCli(['status', '--warehouse', warehouse]);
      expect(status.code).toBe(2);
      expect(status.stderr).toMatch(/is a portfolio of 2 sites \(north, south\)/);
    });
});
