import { afterAll, describe, expect, it } from 'vitest';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadSettings } from '../../src/config/load-settings.ts';
import { settingKinds } from '../../src/config/settings.ts';
import { durationMs } from '../../src/config/duration.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { tempDir } from '../support/temp-dir.ts';

const { path: dir, remove: cleanup } = await tempDir('gf-settings-');
afterAll(() => cleanup());

async function pipeline(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

async function configError(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message;
}

describe('settings', () => {
  it('take flags over environment over pipeline file over defaults', async () => {
    const file = await pipeline('p.json', JSON.stringify({ rate: 2, perPage: 50, warehouse: 'from-file.duckdb' }));
    const env = { GRANTFLOW_RATE: '3', GRANTFLOW_PER_PAGE: '60' };
    const s = await loadSettings({ rate: 4 }, { pipeline: file, env });
    expect(s.rate).toBe(4);
    expect(s.perPage).toBe(60);
    expect(s.warehouse).toBe(join(dir, 'from-file.duckdb')); // relative to the pipeline file's folder
    expect(s.concurrency).toBe(8);
    expect(s.siteTimeZone).toBe('UTC');
  });

  it('read every kind of value from the environment', async () => {
    const s = await loadSettings(
      {},
      {
        env: {
          GRANTFLOW_FULL_REFRESH: 'yes',
          GRANTFLOW_STREAMS: 'applications, programs',
          GRANTFLOW_SITE_TIME_ZONE: 'Europe/Berlin',
        },
      },
    );
    expect(s.fullRefresh).toBe(true);
    expect(s.streams).toEqual(['applications', 'programs']);
    expect(s.siteTimeZone).toBe('Europe/Berlin');
  });

  it('name the bad key and where it came from', async () => {
    expect(await configError(loadSettings({}, { env: { GRANTFLOW_RATE: 'fast' } }))).toMatch(
      /GRANTFLOW_RATE must be a number, got "fast"/,
    );
    expect(await configError(loadSettings({}, { env: { GRANTFLOW_SITE_TIME_ZONE: 'Mars/Olympus' } }))).toMatch(
      /GRANTFLOW_SITE_TIME_ZONE: must be an IANA time zone/,
    );
    expect(await configError(loadSettings({ site: 'not a url' }, { env: {} }))).toMatch(/^--site: /);
    expect(await configError(loadSettings({}, { env: { GRANTFLOW_DUCKDB_MEMORY_LIMIT: 'lots' } }))).toMatch(
      /GRANTFLOW_DUCKDB_MEMORY_LIMIT: must be a size such as 256MB or 2GB/,
    );
    const typo = await pipeline('typo.json', JSON.stringify({ rte: 5 }));
    expect(await configError(loadSettings({}, { pipeline: typo, env: {} }))).toMatch(/unknown setting "rte"/);
    const wrongType = await pipeline('type.json', JSON.stringify({ perPage: 'many' }));
    expect(await configError(loadSettings({}, { pipeline: wrongType, env: {} }))).toMatch(
      /"perPage" in pipeline file .*type\.json/,
    );
    const broken = await pipeline('broken.json', '{"rate": 5,');
    expect(await configError(loadSettings({}, { pipeline: broken, env: {} }))).toMatch(/is not valid JSON/);
    expect(await configError(loadSettings({}, { pipeline: join(dir, 'missing.json'), env: {} }))).toMatch(
      /no such file/,
    );
  });

  it('refuse an empty stream list from a pipeline file instead of reading it as every stream', async () => {
    const empty = await pipeline('no-streams.json', JSON.stringify({ streams: [] }));
    expect(await configError(loadSettings({}, { pipeline: empty, env: {} }))).toMatch(
      /^"streams" in pipeline file .*no-streams\.json: must name at least one stream; leave it out to sync every stream$/,
    );
  });

  it("read and validate only a command's own settings, but refuse unknown pipeline keys all the same", async () => {
    const keys = ['warehouse', 'logLevel'] as const;
    const env = { GRANTFLOW_RATE: 'fast', GRANTFLOW_WAREHOUSE: 'env.duckdb' };
    const mixed = await pipeline('mixed.json', JSON.stringify({ perPage: 'many', logLevel: 'warn' }));
    expect(await loadSettings({}, { pipeline: mixed, env, keys })).toEqual({
      warehouse: resolve('env.duckdb'),
      logLevel: 'warn',
    });
    const badUsed = await pipeline('bad-used.json', JSON.stringify({ logLevel: 'loud' }));
    expect(await configError(loadSettings({}, { pipeline: badUsed, env, keys }))).toMatch(
      /^"logLevel" in pipeline file .*bad-used\.json: /,
    );
    const typo = await pipeline('typo-keys.json', JSON.stringify({ rte: 5 }));
    expect(await configError(loadSettings({}, { pipeline: typo, env, keys }))).toMatch(/unknown setting "rte"/);
  });

  it('read a time budget as a duration with units, and refuse anything else', async () => {
    expect(durationMs('5h30m')).toBe((5 * 60 + 30) * 60_000);
    expect(durationMs('1d 2h')).toBe(26 * 3_600_000);
    expect(durationMs('1m30s')).toBe(90_000);
    expect(durationMs('1500ms')).toBe(1_500);
    for (const bad of ['', '30', '0s', '5 hours', 'h', '30m5h']) expect(durationMs(bad), bad).toBeNull();
    const settings = await loadSettings({}, { env: { GRANTFLOW_MAX_DURATION: '90m' } });
    expect(settings.maxDuration).toBe('90m');
    expect(await configError(loadSettings({ maxDuration: '5x' }, { env: {} }))).toMatch(
      /^--max-duration: must be a duration such as 5h30m/,
    );
  });

  it('refuse a DuckDB memory limit below the minimum a sync needs, in any unit', async () => {
    for (const small of ['0MB', '1KB', '63MB', '61MiB', '0.05GB']) {
      expect(await configError(loadSettings({ duckdbMemoryLimit: small }, { env: {} }))).toMatch(
        /^--duckdb-memory-limit: must be at least 64MB/,
      );
    }
    expect(await configError(loadSettings({}, { env: { GRANTFLOW_DUCKDB_MEMORY_LIMIT: '16MB' } }))).toMatch(
      /^environment variable GRANTFLOW_DUCKDB_MEMORY_LIMIT: must be at least 64MB/,
    );
    for (const ok of ['64MB', '62MiB', '0.5GB', '2GiB'])
      expect((await loadSettings({ duckdbMemoryLimit: ok }, { env: {} })).duckdbMemoryLimit).toBe(ok);
  });

  it("resolve a pipeline file's relative paths against its folder, not the working directory", async () => {
    const folder = join(dir, 'prod', 'pipelines');
    await mkdir(folder, { recursive: true });
    const file = join(folder, 'production.json');
    await writeFile(
      file,
      JSON.stringify({ credentials: 'creds.json', warehouse: '../w.duckdb', snapshots: 'snap', rawDir: '/abs/raw' }),
    );
    const s = await loadSettings({}, { pipeline: file, env: {} });
    expect(s.credentials).toBe(join(folder, 'creds.json'));
    expect(s.warehouse).toBe(join(dir, 'prod', 'w.duckdb'));
    expect(s.snapshots).toBe(join(folder, 'snap'));
    expect(s.rawDir).toBe('/abs/raw');
    // A Postgres URL is not a path; flags and variables are relative to the working directory (resolved, so that
    // messages name the path used).
    const pgFile = join(folder, 'pg.json');
    await writeFile(pgFile, JSON.stringify({ warehouse: 'postgres://u@h:5432/db', credentials: 'creds.json' }));
    const p = await loadSettings(
      { credentials: 'mine.json' },
      { pipeline: pgFile, env: { GRANTFLOW_SNAPSHOTS: 'snaps' } },
    );
    expect(p.warehouse).toBe('postgres://u@h:5432/db');
    expect(p.credentials).toBe(resolve('mine.json'));
    expect(p.snapshots).toBe(resolve('snaps'));
  });

  it('take an s3:// snapshot location as it is, with path-style from a pipeline file or GRANTFLOW_S3_FORCE_PATH_STYLE', async () => {
    const file = await pipeline('s3.json', JSON.stringify({ snapshots: 's3://bkt/a/b/', s3ForcePathStyle: true }));
    const s = await loadSettings({}, { pipeline: file, env: {} });
    expect(s.snapshots).toBe('s3://bkt/a/b/');
    expect(s.s3ForcePathStyle).toBe(true);
    expect((await loadSettings({}, { env: {} })).s3ForcePathStyle).toBe(false);
    const e = await loadSettings({}, { env: { GRANTFLOW_S3_FORCE_PATH_STYLE: 'true' } });
    expect(e.s3ForcePathStyle).toBe(true);
    for (const [bad, why] of [
      ['gs://bkt/x', /no other kind of URL names a snapshot location/],
      ['s3://', /not a bucket name/],
      ['s3://bkt/a//b', /empty, "." or ".." part/],
      ['s3://bkt/x?versionId=1', /no query or fragment/],
    ] as const) {
      expect(await configError(loadSettings({ snapshots: bad }, { env: {} }))).toMatch(why);
    }
  });

  it("refuse a site URL that ends in /api: it must be the site's root URL", async () => {
    for (const site of [
      'http://127.0.0.1:9/api',
      'https://grants.example.org/api/',
      'https://x.example.org/API/programs/',
    ])
      expect(await configError(loadSettings({ site }, { env: {} }))).toMatch(
        /^--site: must be the site's root URL .*without \/api/,
      );
    expect(await configError(loadSettings({}, { env: { GRANTFLOW_SITE: 'https://x.example.org/api' } }))).toMatch(
      /^environment variable GRANTFLOW_SITE: must be the site's root URL/,
    );
    for (const site of ['https://grants.example.org', 'https://grants.example.org/', 'https://example.org/apis-portal'])
      expect((await loadSettings({ site }, { env: {} })).site).toBe(site);
  });

  it('refuse a Postgres schema that is not a plain identifier, saying what one is', async () => {
    for (const schema of ['grant-flow', 'my schema', "o'brien", '1st', 'x'.repeat(64)])
      expect(await configError(loadSettings({ schema }, { env: {} }))).toBe(
        '--schema: must be a plain SQL identifier: letters, digits and underscores, not starting with a digit, at most 63 characters',
      );
    for (const schema of ['Analytics', 'grant_flow_2', 'x'.repeat(63)])
      expect((await loadSettings({ schema }, { env: {} })).schema).toBe(schema);
  });

  it('refuse a Postgres URL that names its schema: pg ignores it and the tables would land in --schema (public)', async () => {
    for (const warehouse of [
      'postgres://u@127.0.0.1:5432/db?schema=analytics',
      'postgresql://u@127.0.0.1/db?sslmode=disable&currentSchema=analytics',
      'postgres://u@127.0.0.1/db?SEARCH_PATH=analytics',
    ])
      expect(await configError(loadSettings({ warehouse }, { env: {} }))).toMatch(
        /^--warehouse: must not name a schema in the URL .*use --schema/,
      );
    expect(
      await configError(loadSettings({}, { env: { GRANTFLOW_WAREHOUSE: 'postgres://u@h/db?schema=analytics' } })),
    ).toMatch(/^environment variable GRANTFLOW_WAREHOUSE: must not name a schema in the URL/);
    // Other parameters pass, and a DuckDB file may have "schema=" in its name.
    for (const warehouse of ['postgres://u@127.0.0.1/db?sslmode=require&application_name=x', 'postgres://u@h/db'])
      expect((await loadSettings({ warehouse }, { env: {} })).warehouse).toBe(warehouse);
    expect((await loadSettings({ warehouse: 'w?schema=x.duckdb' }, { env: {} })).warehouse).toMatch(
      /w\?schema=x\.duckdb$/,
    );
  });

  it("refuse a Postgres URL whose options set search_path: grantflow's own search path would override it", async () => {
    const withOptions = (options: string): string => {
      const u = new URL('postgres://u@127.0.0.1:5432/db?sslmode=disable');
      u.searchParams.set('options', options);
      return u.toString();
    };
    for (const options of [
      '-c search_path=analytics',
      '-c statement_timeout=600000 -csearch_path=analytics,public',
      '--search_path=analytics',
      '--search-path=analytics',
      '-c SEARCH_PATH=analytics',
    ])
      expect(await configError(loadSettings({ warehouse: withOptions(options) }, { env: {} })), options).toMatch(
        /^--warehouse: must not set search_path in the URL's options .*use --schema/,
      );
    // The same written by hand, %-encoded.
    expect(
      await configError(
        loadSettings({ warehouse: 'postgres://u@h/db?options=-c%20search_path%3Danalytics' }, { env: {} }),
      ),
    ).toMatch(/^--warehouse: must not set search_path/);
    // Other options pass (pool.ts keeps them), as does a value merely mentioning the name.
    for (const options of ['-c statement_timeout=600000', '-c application_name=search_path=x'])
      expect((await loadSettings({ warehouse: withOptions(options) }, { env: {} })).warehouse).toBe(
        withOptions(options),
      );
  });

  it('take --site-moved from the flag only: a variable or pipeline key would lift the one-site guard on every run', async () => {
    const keys = ['site', 'siteMoved'] as const;
    expect((await loadSettings({ siteMoved: true }, { env: {}, keys })).siteMoved).toBe(true);
    expect((await loadSettings({}, { env: {}, keys })).siteMoved).toBe(false);
    expect(await configError(loadSettings({}, { env: { GRANTFLOW_SITE_MOVED: 'true' }, keys }))).toMatch(
      /environment variable GRANTFLOW_SITE_MOVED not read: --site-moved is a flag only/,
    );
    // Refused even beside the flag, and by commands that do not take it (as an unknown key would be).
    const file = await pipeline('moved.json', JSON.stringify({ siteMoved: true }));
    for (const options of [{ keys }, { keys: ['rate'] as const }]) {
      expect(await configError(loadSettings({ siteMoved: true }, { pipeline: file, env: {}, ...options }))).toMatch(
        /"siteMoved" in pipeline file .*moved\.json not read: --site-moved is a flag only/,
      );
    }
    // A command that does not take the setting ignores the variable, as it does any other it does not read.
    expect((await loadSettings({}, { env: { GRANTFLOW_SITE_MOVED: 'true' }, keys: ['rate'] })).rate).toBe(5);
  });

  it('every shipped pipeline file is valid and uses only known keys', async () => {
    const root = new URL('../../pipelines/', import.meta.url).pathname;
    const files = (await readdir(root)).filter((f) => f.endsWith('.json'));
    expect(files.sort()).toEqual(['demo.json', 'example.json']);
    for (const f of files) {
      const s = await loadSettings({}, { pipeline: join(root, f), env: {} });
      expect(
        Object.keys(s).every((k) => k in settingKinds),
        f,
      ).toBe(true);
    }
    const demo = await loadSettings({}, { pipeline: join(root, 'demo.json'), env: {} });
    expect(demo.rate).toBeGreaterThan(5);
  });
});
