/**
 * A portfolio: two simulated sites (different seeds and credentials: a file for one, the site's own variables for the
 * other) synced at once into one warehouse, each into its own schema, with `portfolio` views over both. Each site's
 * schema must equal a one-site sync of that site; the views hold their union with the right `site`; a site with bad
 * credentials or nothing answering fails alone while the other completes.
 */
import { writeFile } from 'node:fs/promises';

import { join } from 'node:path';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { portfolioSchema, siteSchema, type PortfolioSite } from '../../src/config/portfolio.ts';

import { settingsSchema } from '../../src/config/settings.ts';

import { runPortfolio, type PortfolioResult } from '../../src/pipeline/portfolio.ts';

import type { SimulatorHandle } from '../../src/simulator/index.ts';

import { readManifest } from '../../src/snapshot/index.ts';

import { silentLogger } from '../../src/util/logger.ts';

import { openWarehouse } from '../../src/warehouse/index.ts';

import {
  dumpWarehouse,
  modelNames,
  clockModels,
  postgresUrl,
  runCli,
  startSite,
  summarize,
  syncOnce,
  tempDir,
  writeCredentials,
  type TableDump,
} from '../support/harness.ts';
import { tables } from '../../src/streams/registry.ts';
import { catalogComments } from '../support/catalog-comments.ts';

const names = ['north', 'south'] as const;
type Name = (typeof names)[number];
let sims: Record<Name, SimulatorHandle>;
let work: { path: string; remove: () => Promise<void> };
/** Each site synced alone (DuckDB), tables and models: what its schema in the portfolio must equal. */
const alone = {} as Record<Name, Record<string, TableDump>>;
const dataTables = tables.filter((t) => t.kind !== 'bookkeeping').map((t) => t.name);

async function dropPostgresPortfolio(): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    for (const schema of [portfolioSchema, ...names.map(siteSchema)])
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  sims = {
    north: await startSite({ scale: 'tiny', seed: 61 }),
    south: await startSite({ scale: 'tiny', seed: 62 }),
  };
  work = await tempDir('grantflow-portfolio-');
  for (const name of names) {
    const credentials = await writeCredentials(sims[name], join(work.path, `alone-${name}.json`));
    const warehouse = join(work.path, `alone-${name}.duckdb`);
    const result = await syncOnce(sims[name], { credentials, warehouse });
    if (result.status !== 'succeeded') throw new Error(`the one-site sync of ${name} did not succeed`);
    alone[name] = await dumpWarehouse(warehouse, { models: modelNames });
  }
  await dropPostgresPortfolio();
}, 240_000);

afterAll(async () => {
  for (const sim of Object.values(sims ?? {})) await sim.close();
  await dropPostgresPortfolio();
  await work?.remove();
});

/** North reads a credentials file, south its own variables (GRANTFLOW_SOUTH_*). */
async function portfolioSites(dir: string): Promise<{ sites: PortfolioSite[]; env: NodeJS.ProcessEnv }> {
  const credentials = await writeCredentials(sims.north, join(dir, 'north.json'));
  const south = sims.south.credentials;
  return {
    sites: [
      { name: 'north', site: sims.north.url, credentials },
      { name: 'south', site: sims.south.url },
    ],
    env: {
      GRANTFLOW_SOUTH_CLIENT_ID: south.client_id,
      GRANTFLOW_SOUTH_CLIENT_SECRET: south.client_secret,
      GRANTFLOW_SOUTH_ACCESS_TOKEN: south.access_token,
      GRANTFLOW_SOUTH_REFRESH_TOKEN: south.refresh_token,
    },
  };
}

/** Snapshots only where a test reads them: they cost time and prove nothing more on later runs. */
function pipelineSettings(warehouse: string, dir: string, snapshot = false) {
  return settingsSchema.parse({
    warehouse,
    rate: 1000,
    landRaw: false,
    snapshot,
    snapshots: join(dir, 'snapshots'),
    logLevel: 'silent',
  });
}

/** A portfolio file listing north alone, synced. */
function syncNorthAlone(
  sites: readonly PortfolioSite[],
  env: NodeJS.ProcessEnv,
  warehouse: string,
  dir: string,
): Promise<PortfolioResult> {
  const north = sites.filter((s) => s.name === 'north');
  return runPortfolio({
    settings: pipelineSettings(warehouse, dir),
    sites: north,
    run: north,
    logger: silentLogger,
    env,
  });
}

describe.each(['duckdb', 'postgres'] as const)('a portfolio of two sites (%s)', (dialect) => {
  let dir: string;
  let warehouse: string;
  let first: PortfolioResult;
  let sites: PortfolioSite[];
  let env: NodeJS.ProcessEnv;

  /** The warehouse opened on one schema, on either engine. */
  const open = (schema: string) =>
    openWarehouse(warehouse, { schema, duckdbSchema: schema, logger: silentLogger, existingOnly: true });
  const siteCounts = async (view: string): Promise<Record<string, number>> => {
    const w = await open(portfolioSchema);
    try {
      const rows = await w.query(`SELECT site, count(*) AS n FROM ${portfolioSchema}.${view} GROUP BY site`);
      return Object.fromEntries(rows.map((r) => [String(r.site), Number(r.n)]));
    } finally {
      await w.close();
    }
  };

  beforeAll(async () => {
    dir = join(work.path, dialect);
    await (await import('node:fs/promises')).mkdir(dir);
    // Named as docs/portfolio.md names it: DuckDB would call the file's catalog `portfolio`, as the views' schema is.
    warehouse = dialect === 'duckdb' ? join(dir, 'portfolio.duckdb') : postgresUrl;
    ({ sites, env } = await portfolioSites(dir));
    first = await runPortfolio({
      settings: pipelineSettings(warehouse, dir, true),
      sites,
      run: sites,
      logger: silentLogger,
      env,
    });
  }, 240_000);

  it('syncs every site into a schema of its own, each equal to a sync of that site alone', async () => {
    expect(first.sites.map((o) => [o.site.name, o.exitCode, o.error])).toEqual([
      ['north', 0, null],
      ['south', 0, null],
    ]);
    expect(first.exitCode, first.lines.join('\n')).toBe(0);
    // Different sites: a mix-up of the two would show.
    expect(summarize(alone.north)).not.toEqual(summarize(alone.south));
    for (const name of names) {
      const dump = await dumpWarehouse(warehouse, {
        schema: siteSchema(name),
        duckdbSchema: siteSchema(name),
        models: modelNames,
      });
      // Rows of a clock model differ between any two syncs (their counts are compared below and in the next test).
      const comparable = (d: Record<string, TableDump>) =>
        Object.fromEntries(
          Object.entries(d).filter(([k]) =>
            k.startsWith('model:') ? dialect === 'duckdb' && !clockModels.has(k.slice('model:'.length)) : true,
          ),
        );
      expect(summarize(comparable(dump)), name).toEqual(summarize(comparable(alone[name])));
      if (dialect === 'postgres')
        for (const model of modelNames)
          expect(dump[`model:${model}`]?.rows, `${name} ${model}`).toBe(alone[name][`model:${model}`]?.rows);
    }
  });

  it('unions every table and model of the sites in the portfolio views, with the right site', async () => {
    for (const table of [...dataTables, ...modelNames]) {
      const key = modelNames.includes(table as (typeof modelNames)[number]) ? `model:${table}` : table;
      const expected = Object.fromEntries(
        names.map((n) => [n, alone[n][key]?.rows ?? 0] as const).filter(([, rows]) => rows > 0),
      );
      expect(await siteCounts(table), table).toEqual(expected);
    }
  });

  it('totals the award rates and funding flow per site', async () => {
    const w = await open(portfolioSchema);
    try {
      const rates = await w.query(`SELECT site, awarded, declined FROM ${portfolioSchema}.award_rates_by_site`);
      const flow = await w.query(`SELECT site, transfers FROM ${portfolioSchema}.funding_flow_by_site`);
      const sum = (name: Name, model: string, column: string): number =>
        (alone[name][`model:${model}`]?.content ?? []).reduce((a, r) => a + Number(r[column] ?? 0), 0);
      for (const name of names) {
        const rate = rates.find((r) => r.site === name);
        expect([Number(rate?.awarded), Number(rate?.declined)], name).toEqual([
          sum(name, 'award_rates', 'awarded'),
          sum(name, 'award_rates', 'declined'),
        ]);
        expect(Number(flow.find((r) => r.site === name)?.transfers), name).toBe(sum(name, 'funding_flow', 'transfers'));
      }
    } finally {
      await w.close();
    }
  });

  it("describes every view and column of the portfolio schema, as its sites' tables are", async () => {
    const w = await open(portfolioSchema);
    try {
      const views = await catalogComments(w, portfolioSchema);
      expect(views.filter((d) => d.column === null).length).toBeGreaterThan(dataTables.length);
      const missing = views.filter((d) => d.comment === null || d.comment.trim() === '');
      expect(missing.map((d) => `${d.table}.${d.column ?? ''}`)).toEqual([]);
      // A column of a union view says what the same column of its first site's table says.
      const site = await catalogComments(w, siteSchema('north'));
      const ofSite = new Map(site.map((d) => [`${d.table}.${d.column ?? ''}`, d.comment]));
      const applications = views.find((d) => d.table === 'applications' && d.column === 'state');
      expect(applications?.comment).toBe(ofSite.get('applications.state'));
    } finally {
      await w.close();
    }
  });

  it('keeps a snapshot folder per site and one of the portfolio views', () => {
    const snapshots = join(dir, 'snapshots');
    for (const name of names)
      expect(Object.keys(readManifest(join(snapshots, name))?.tables ?? {})).toContain('applications');
    const views = Object.keys(readManifest(join(snapshots, portfolioSchema))?.tables ?? {});
    expect(views).toEqual(expect.arrayContaining(['applications', 'award_rates', 'award_rates_by_site']));
  });

  it('fails a site with bad credentials, or nothing answering, alone: the other completes', async () => {
    const bad = join(dir, 'south-bad.json');
    await writeFile(
      bad,
      JSON.stringify({ ...sims.south.credentials, access_token: 'revoked', refresh_token: 'revoked' }),
      { mode: 0o600 },
    );
    const failing: PortfolioSite[] = [
      sites[0]!,
      { name: 'south', site: sims.south.url, credentials: bad },
      { name: 'gone', site: 'http://127.0.0.1:9' },
    ];
    const result = await runPortfolio({
      settings: pipelineSettings(warehouse, dir),
      sites: failing,
      run: failing,
      logger: silentLogger,
      env: {
        GRANTFLOW_GONE_CLIENT_ID: 'a',
        GRANTFLOW_GONE_CLIENT_SECRET: 'b',
        GRANTFLOW_GONE_ACCESS_TOKEN: 'c',
        GRANTFLOW_GONE_REFRESH_TOKEN: 'd',
      },
    });
    const byName = Object.fromEntries(result.sites.map((o) => [o.site.name, o]));
    expect(byName.north?.exitCode).toBe(0);
    expect(byName.north?.result?.status).toBe('succeeded');
    expect(byName.south?.exitCode).toBe(2);
    expect(byName.south?.error).toMatch(/credential|token|rejected/i);
    expect(byName.gone?.exitCode).toBe(2);
    expect(result.exitCode).toBe(2);
    expect(JSON.stringify(result)).not.toContain(sims.south.credentials.client_secret);
    // South's earlier sync stays, and the views still cover it.
    expect(Object.keys(await siteCounts('applications')).sort()).toEqual(['north', 'south']);
  }, 180_000);

  it('rebuilds the views for the sites listed: a site removed leaves them, and --sites syncs only some', async () => {
    const north = sites.filter((s) => s.name === 'north');
    const result = await syncNorthAlone(sites, env, warehouse, dir);
    expect(result.exitCode).toBe(0);
    expect(await siteCounts('applications')).toEqual({ north: alone.north.applications?.rows });
    // Back in the file but not run (`--sites north`): its schema, synced before, is in the views again.
    const again = await runPortfolio({
      settings: pipelineSettings(warehouse, dir),
      sites,
      run: north,
      logger: silentLogger,
      env,
    });
    expect(again.sites.map((o) => o.site.name)).toEqual(['north']);
    expect(Object.keys(await siteCounts('applications')).sort()).toEqual(['north', 'south']);
  }, 180_000);
});

describe('a DuckDB portfolio in a file named like a schema grantflow uses', () => {
  it.each(['analytics', 'site_north', 'main'])(
    '%s.duckdb: the sync succeeds and the views answer',
    async (name) => {
      const dir = join(work.path, `named-${name}`);
      await (await import('node:fs/promises')).mkdir(dir);
      const { sites, env } = await portfolioSites(dir);
      const warehouse = join(dir, `${name}.duckdb`);
      const result = await syncNorthAlone(sites, env, warehouse, dir);
      expect(result.exitCode, result.lines.join('\n')).toBe(0);
      const w = await openWarehouse(warehouse, { duckdbSchema: portfolioSchema, logger: silentLogger, readOnly: true });
      try {
        const [count] = await w.query(`SELECT count(*) AS n FROM ${portfolioSchema}.applications`);
        expect(Number(count?.n)).toBe(alone.north.applications?.rows);
      } finally {
        await w.close();
      }
      // A reader opening the file directly (its catalog named after the file) reads the totals too.
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const reader = await DuckDBInstance.create(warehouse, { access_mode: 'READ_ONLY' });
      const connection = await reader.connect();
      try {
        const rows = await connection.runAndReadAll(
          `SELECT awarded FROM ${portfolioSchema}.award_rates_by_site WHERE site = 'north'`,
        );
        const awarded = (alone.north['model:award_rates']?.content ?? []).reduce(
          (a, r) => a + Number(r.awarded ?? 0),
          0,
        );
        expect(Number(rows.getRowObjects()[0]?.awarded)).toBe(awarded);
      } finally {
        connection.closeSync();
        reader.closeSync();
      }
    },
    120_000,
  );
});

describe('a portfolio on Postgres, one run per site at once (a CI job per site)', () => {
  it("two runs, one site each, wait while another holds the views' lock, then leave views over both", async () => {
    const dir = join(work.path, 'jobs');
    await (await import('node:fs/promises')).mkdir(dir);
    const { sites, env } = await portfolioSites(dir);
    // A third job rebuilding the views: their lock held while both sites sync.
    const holder = await openWarehouse(postgresUrl, { schema: portfolioSchema, logger: silentLogger });
    let released = false;
    const release = async (): Promise<void> => {
      if (!released) await holder.close();
      released = true;
    };
    let results: PortfolioResult[];
    try {
      await holder.acquireLock('another job rebuilding the portfolio views');
      const before = { north: await siteRuns('north'), south: await siteRuns('south') };
      const jobs = sites.map((site) =>
        runPortfolio({ settings: pipelineSettings(postgresUrl, dir), sites, run: [site], logger: silentLogger, env }),
      );
      let settled = 0;
      for (const job of jobs) void job.finally(() => settled++);
      // Both sites' own syncs complete under the held lock; the runs then wait for the views' lock.
      const synced = async (): Promise<boolean> =>
        (await siteRuns('north')) > before.north && (await siteRuns('south')) > before.south;
      while (settled === 0 && !(await synced())) await new Promise((done) => setTimeout(done, 200));
      await new Promise((done) => setTimeout(done, 1_500));
      await release();
      results = await Promise.all(jobs);
    } finally {
      await release();
    }
    for (const result of results) {
      expect(result.exitCode).toBe(0);
      expect(result.lines.join('\n')).not.toContain('FAILED');
    }
    const views = await openWarehouse(postgresUrl, {
      schema: portfolioSchema,
      logger: silentLogger,
      existingOnly: true,
    });
    try {
      const rows = await views.query(`SELECT DISTINCT site FROM ${portfolioSchema}.applications ORDER BY site`);
      expect(rows.map((r) => r.site)).toEqual(['north', 'south']);
    } finally {
      await views.close();
    }
  }, 180_000);
});

/** Succeeded runs recorded in a site's schema on Postgres (none before its first sync made the table). */
async function siteRuns(name: Name): Promise<number> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${siteSchema(name)}._grantflow_runs WHERE status = 'succeeded'`,
    );
    return Number(rows[0]?.n ?? 0);
  } catch (e) {
    if ((e as { code?: string }).code === '42P01') return 0; // undefined_table
    throw e;
  } finally {
    await client.end();
  }
}

describe('grantflow sync --pipeline with "sites"', () => {
  it("prints a line per site and exits with the worst site's code", async () => {
    const dir = join(work.path, 'cli');
    await (await import('node:fs/promises')).mkdir(dir);
    const { env } = await portfolioSites(dir);
    const pipeline = join(dir, 'portfolio.json');
    await writeFile(
      pipeline,
      JSON.stringify({
        sites: [
          { name: 'north', site: sims.north.url, credentials: 'north.json' },
          { name: 'south', site: sims.south.url },
          { name: 'nocreds', site: sims.south.url },
        ],
        warehouse: 'w.duckdb',
        snapshots: 'snapshots',
        rawDir: 'raw',
        rate: 1000,
      }),
    );
    const out = await runCli(['sync', '--pipeline', pipeline, '--sites', 'north,nocreds'], { env });
    expect(out.code, out.stderr).toBe(2);
    expect(out.stdout).toMatch(/^ {2}north +SUCCEEDED +0 /m);
    expect(out.stdout).toMatch(/^ {2}nocreds +FAILED +2 .*GRANTFLOW_NOCREDS_CLIENT_ID/m);
    expect(out.stdout).not.toMatch(/^ {2}south /m);
    // Doctor checks each site as its sync would run: its own schema and credentials.
    const doctor = await runCli(['doctor', '--pipeline', pipeline], { env });
    expect(doctor.code, doctor.stdout).toBe(2);
    expect(doctor.stdout).toMatch(/^site north .*schema site_north\)\n(?:(?:ok|warn) .*\n)+site south /m);
    expect(doctor.stdout).toMatch(/^site nocreds .*\nFAIL +credentials +no credentials for site nocreds/m);
    const unknown = await runCli(['sync', '--pipeline', pipeline, '--sites', 'west'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--sites names "west"/);
  }, 180_000);
});
