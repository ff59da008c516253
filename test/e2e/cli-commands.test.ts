/**
 * The operator's commands as a user runs them: doctor before, status and replay after a sync. They run in process
 * (runCliInProcess) where what a command does and says is the subject; a real process where it is the process: exit
 * code and message of bad usage as the OS sees them, and a sync's summary on stdout apart from its log on stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { DuckDBInstance } from '@duckdb/node-api';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { holdDuckDBFile } from '../support/warehouse-fixtures.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import {
  clusterName,
  dumpWarehouse,
  postgresSchema,
  postgresUrl,
  runCli,
  startSite,
  summarize,
  syncOnce,
  tempDir,
  writeCredentials,
  syncCliArgs,
} from '../support/harness.ts';

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let credentials: string;
let common: string[];

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 41 });
  dir = await tempDir();
  credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  common = ['--site', sim.url, '--credentials', credentials, '--warehouse', join(dir.path, 'w.duckdb')];
});
afterAll(async () => {
  await sim.close();
  await dir.remove();
});

describe('bad usage', () => {
  it('an unknown flag is named in one line with a pointer to --help, not the whole help (cron logs)', async () => {
    const r = await runCli(['sync', '--bogus-flag']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      "error: unknown option '--bogus-flag'",
      '(run with --help for usage)',
    ]);
  });

  // README: every setting from a flag, a variable or a pipeline file is validated before anything is written; one a
  // flag overrides too, or dropping that flag later (a cron line edited) would turn up the error only then.
  it.each([
    ['a pipeline file', { rate: 'fast' }, {}, /^grantflow: "rate" in pipeline file .*overrides\.json: /],
    ['a GRANTFLOW_* variable', {}, { GRANTFLOW_RATE: '-1' }, /^grantflow: environment variable GRANTFLOW_RATE: /],
  ])(
    'a bad value in %s is refused even while a flag overrides it: exit 2, nothing written',
    async (_, fileSettings, env, message) => {
      const cwd = join(dir.path, 'overridden-cwd');
      await mkdir(cwd);
      const file = join(dir.path, 'overrides.json');
      await writeFile(file, JSON.stringify(fileSettings));
      try {
        // syncCliArgs gives --rate, the flag that overrides the bad value.
        const args = [...syncCliArgs(sim.url, cwd, { credentials }), '--pipeline', file, '--models', 'false'];
        const r = await runCliInProcess(args, { cwd, env });
        expect(r.code).toBe(2);
        const lines = r.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(message);
        expect(lines[0]).toMatch(/\(overridden by --rate, but it must be valid all the same\)$/);
        expect(await readdir(cwd)).toEqual([]);
      } finally {
        await rm(cwd, { recursive: true, force: true });
        await rm(file, { force: true });
      }
    },
  );
});

describe('an empty list where a list is expected', () => {
  it.each([
    ['--streams', ''],
    ['--streams', ' , ,'],
    ['GRANTFLOW_STREAMS', ','],
  ])('sync %s "%s" exits 2 in one line and writes nothing, instead of syncing every stream', async (where, value) => {
    const cwd = join(dir.path, 'empty-streams-cwd');
    await mkdir(cwd);
    try {
      const flag = where.startsWith('--') ? [where, value] : [];
      const r = await runCliInProcess(['sync', ...common, '--warehouse', join(cwd, 'w.duckdb'), ...flag], {
        cwd,
        env: flag.length ? {} : { [where]: value },
      });
      expect(r.code).toBe(2);
      const source = flag.length ? '--streams' : 'environment variable GRANTFLOW_STREAMS';
      expect(r.stderr.trim().split('\n')).toEqual([
        `grantflow: ${source}: must name at least one stream; leave it out to sync every stream`,
      ]);
      expect(await readdir(cwd)).toEqual([]);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it.each(['', ' , '])('snapshot --tables "%s" exits 2 in one line, before it opens the warehouse', async (value) => {
    const target = join(dir.path, 'empty-tables.duckdb');
    const r = await runCliInProcess(['snapshot', '--warehouse', target, '--tables', value]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `grantflow: --tables must name at least one table, got "${value}"; leave it out to snapshot every table`,
    ]);
    expect(existsSync(target)).toBe(false);
  });
});

describe('a path that cannot be used: one line naming it and what is wrong, exit 2, no stack', () => {
  /** A regular file, for paths that need a directory where it is. */
  async function aFile(name: string): Promise<string> {
    const file = join(dir.path, name);
    await writeFile(file, 'not a directory');
    return file;
  }

  it('sync --warehouse under a regular file names the file in the way', async () => {
    const file = await aFile('warehouse-parent');
    const target = join(file, 'sub', 'w.duckdb');
    const r = await runCliInProcess(['sync', ...common, '--warehouse', target]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `grantflow: cannot create the directory of DuckDB warehouse ${target} (${file} is a file, not a directory); choose another --warehouse`,
    ]);
  });

  it.each(['sync', 'status'])('%s --warehouse naming a directory says so', async (command) => {
    const folder = join(dir.path, `warehouse-folder-${command}`);
    await mkdir(folder);
    const r = await runCliInProcess([command, ...(command === 'sync' ? common : []), '--warehouse', folder]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `grantflow: DuckDB warehouse ${folder} is a directory, not a file; choose another --warehouse`,
    ]);
    expect(await readdir(folder)).toEqual([]);
  });

  it('docs dictionary --out naming a directory says so', async () => {
    const folder = join(dir.path, 'out-folder');
    await mkdir(folder);
    const r = await runCliInProcess(['docs', 'dictionary', '--out', folder]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `grantflow: cannot write ${folder} (it is a directory, not a file); choose another path with --out`,
    ]);
  });

  it('a pipeline or credentials file under a regular file names the file in the way', async () => {
    const file = await aFile('settings-parent');
    const pipelineRun = await runCliInProcess(['sync', '--pipeline', join(file, 'p.json')]);
    expect(pipelineRun.code).toBe(2);
    expect(pipelineRun.stderr.trim().split('\n')).toEqual([
      `grantflow: pipeline file ${join(file, 'p.json')} cannot be read (${file} is a file, not a directory)`,
    ]);
    const credentialsRun = await runCliInProcess(['sync', ...common, '--credentials', join(file, 'c.json')]);
    expect(credentialsRun.code).toBe(2);
    expect(credentialsRun.stderr.trim().split('\n')).toEqual([
      `grantflow: credentials file ${join(file, 'c.json')} cannot be read (${file} is a file, not a directory)`,
    ]);
  });
});

describe('a warehouse URL that is not a postgres:// one', () => {
  it.each(['postgress://u:secret@127.0.0.1:5432/test', 'pg://127.0.0.1/test', 'mysql://127.0.0.1/test'])(
    'sync --warehouse %s exits 2 before anything is written, instead of syncing into a DuckDB file named after it',
    async (target) => {
      const cwd = join(dir.path, 'url-cwd');
      await mkdir(cwd);
      try {
        const r = await runCliInProcess(
          ['sync', '--site', sim.url, '--credentials', credentials, '--warehouse', target],
          {
            cwd,
          },
        );
        expect(r.code).toBe(2);
        expect(r.stderr.trim().split('\n')).toEqual([
          'grantflow: --warehouse: must be a DuckDB file path or a postgres:// (or postgresql://) URL; no other kind of URL names a warehouse',
        ]);
        expect(await readdir(cwd)).toEqual([]);
      } finally {
        await rm(cwd, { recursive: true, force: true });
      }
    },
  );
});

describe('a Postgres URL whose options set the search path (?options=-c search_path=...)', () => {
  it('sync exits 2 in one line pointing to --schema, before any schema is created, rather than ignoring it', async () => {
    const named = await postgresSchema();
    const flag = await postgresSchema();
    const url = new URL(postgresUrl);
    url.searchParams.set('options', `-c statement_timeout=600000 -c search_path=${named.schema}`);
    try {
      const r = await runCliInProcess(
        syncCliArgs(sim.url, dir.path, { warehouse: ['--warehouse', url.toString(), '--schema', flag.schema] }),
      );
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          /^grantflow: --warehouse: must not set search_path in the URL's options \(options=-c search_path=\.\.\.\): .*use --schema/,
        ),
      ]);
      expect(await schemaExists(postgresUrl, named.schema)).toBe(false);
      expect(await schemaExists(postgresUrl, flag.schema)).toBe(false);
    } finally {
      await named.drop();
      await flag.drop();
    }
  });
});

async function schemaExists(url: string, schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    return rows.length > 0;
  } finally {
    await client.end();
  }
}

describe('grantflow doctor', () => {
  it('checks everything and writes no warehouse data', async () => {
    const r = await runCliInProcess(['doctor', ...common, '--snapshots', join(dir.path, 'snap')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const check of ['credentials', 'site', 'warehouse', 'snapshots'])
      expect(r.stdout).toMatch(new RegExp(`^ok\\s+${check}`, 'm'));
    expect(r.stdout).toMatch(/DuckDB|v1\./);
    expect(existsSync(join(dir.path, 'w.duckdb'))).toBe(false);
  });

  it('checks a Postgres schema that does not exist yet without creating it', async () => {
    const { schema, url, drop } = await postgresSchema();
    try {
      const r = await runCliInProcess(['doctor', ...common, '--warehouse', url, '--schema', schema]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        new RegExp(`^ok\\s+warehouse\\s+.*has no schema ${schema} yet; the first sync creates it`, 'm'),
      );
      expect(await schemaExists(url, schema)).toBe(false);
    } finally {
      await drop();
    }
  });

  it('fails the warehouse check (exit 2) for a DuckDB file whose directory cannot be made, creating nothing', async () => {
    const file = join(dir.path, 'not-a-dir');
    await writeFile(file, 'x');
    const r = await runCliInProcess(['doctor', ...common, '--warehouse', join(file, 'w.duckdb')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^FAIL\s+warehouse\s+warehouse directory .*not-a-dir is not writable/m);
  });

  it('fails the warehouse check (exit 2) for a warehouse whose last sync was of another site, as sync refuses it', async () => {
    const own = join(dir.path, 'site-check');
    await mkdir(own);
    const warehouse = ['--warehouse', join(own, 'w.duckdb')];
    // In process and without models: what doctor reads is the site the warehouse was synced from.
    const synced = await syncOnce(sim, { credentials, warehouse: join(own, 'w.duckdb'), models: false });
    expect(synced.status).toBe('succeeded');
    const args = ['--credentials', credentials, ...warehouse, '--snapshots', join(own, 'snapshots')];
    const same = await runCliInProcess(['doctor', '--site', sim.url, ...args]);
    expect(same.code, same.stdout).toBe(0);
    // The same simulator under another host name: it answers, but it is another site to the warehouse.
    const other = sim.url.replace('127.0.0.1', 'localhost');
    expect(other).not.toBe(sim.url);
    const r = await runCliInProcess(['doctor', '--site', other, ...args]);
    expect(r.code, r.stdout).toBe(2);
    expect(r.stdout).toMatch(/^ok\s+site\s/m);
    expect(r.stdout).toMatch(
      new RegExp(`^FAIL\\s+warehouse\\s+the warehouse .* holds site ${sim.url}.*--site-moved`, 'm'),
    );
    expect((await runCliInProcess([...syncCliArgs(other, own, { credentials, warehouse })])).code).toBe(2);
  });

  it('names the failing check and exits 2 for a corrupt credentials file', async () => {
    const bad = join(dir.path, 'bad.json');
    await writeFile(bad, '{"client_id": ');
    const r = await runCliInProcess([
      'doctor',
      '--site',
      sim.url,
      '--credentials',
      bad,
      '--warehouse',
      join(dir.path, 'w2.duckdb'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^FAIL\s+credentials .*bad\.json/m);
    expect(r.stdout).not.toMatch(/\n\s+at /);
  });
});

describe('grantflow doctor with credentials from GRANTFLOW_* variables', () => {
  const envCreds = (): Record<string, string> => ({
    GRANTFLOW_CLIENT_ID: sim.credentials.client_id,
    GRANTFLOW_CLIENT_SECRET: sim.credentials.client_secret,
    GRANTFLOW_ACCESS_TOKEN: sim.credentials.access_token,
    GRANTFLOW_REFRESH_TOKEN: sim.credentials.refresh_token,
  });
  const warehouse = (): string[] => ['--warehouse', join(dir.path, 'doctor-env.duckdb')];

  it('checks that the site answers like the API without sending (and so rotating) the credentials', async () => {
    const before = sim.credentials;
    const r = await runCliInProcess(['doctor', '--site', sim.url, ...warehouse()], { env: envCreds() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok\s+site\s+.*answers like the grant API \(HTTP 401 .*no token was sent/m);
    expect(sim.credentials).toEqual(before);
  });

  it('fails the site check (exit 2) when nothing answers there', async () => {
    const r = await runCliInProcess(['doctor', '--site', 'http://127.0.0.1:9', ...warehouse()], { env: envCreds() });
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^FAIL\s+site\s+nothing answers at http:\/\/127\.0\.0\.1:9 \(ECONNREFUSED\)/m);
  });

  it('fails the site check (exit 2) for a web server that is not the API', async () => {
    const web = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Welcome</body></html>');
    });
    await new Promise<void>((done) => web.listen(0, '127.0.0.1', done));
    try {
      const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
      const r = await runCliInProcess(['doctor', '--site', url, ...warehouse()], { env: envCreds() });
      expect(r.code).toBe(2);
      expect(r.stdout).toMatch(/^FAIL\s+site\s+.* does not answer like the grant API/m);
    } finally {
      await new Promise((done) => web.close(done));
    }
  });

  it('fails the site check (exit 2) for an endless answer, reading only the first MiB of it', async () => {
    let written = 0;
    const limit = 256 * 2 ** 20;
    const web = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      res.write('[');
      const pump = (): void => {
        while (written < limit && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end(']');
      };
      pump();
    });
    await new Promise<void>((done) => web.listen(0, '127.0.0.1', done));
    try {
      const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
      const r = await runCliInProcess(['doctor', '--site', url, ...warehouse()], { env: envCreds() });
      expect(r.code).toBe(2);
      expect(r.stdout).toMatch(/^FAIL\s+site\s+.* does not answer like the grant API \(HTTP 200 with more than 1 MiB/m);
      expect(written).toBeLessThan(limit);
    } finally {
      web.closeAllConnections();
      await new Promise((done) => web.close(done));
    }
  });

  it('without --site names the missing setting and exits 2', async () => {
    const r = await runCliInProcess(['doctor', '--credentials', credentials, ...warehouse()], {
      env: { GRANTFLOW_SITE: '' },
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^FAIL\s+site\s+no site: pass --site URL/m);
  });
});

describe('a pipeline file in another folder than the working directory', () => {
  it('has its relative paths resolved against its own folder', async () => {
    const folder = join(dir.path, 'prod', 'pipelines');
    await mkdir(folder, { recursive: true });
    await writeCredentials(sim, join(folder, 'creds.json'));
    const pipeline = join(folder, 'production.json');
    await writeFile(
      pipeline,
      JSON.stringify({
        site: sim.url,
        credentials: 'creds.json',
        warehouse: '../w.duckdb',
        rawDir: '../raw',
        snapshot: false,
        rate: 500,
        // One small stream and no models: the case is about where the paths land, not what a sync loads.
        streams: ['programs'],
        models: false,
      }),
    );
    // runCli works in the repository root: nothing of the pipeline lives there.
    const r = await runCliInProcess(['sync', '--pipeline', pipeline]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(existsSync(join(dir.path, 'prod', 'w.duckdb'))).toBe(true);
    expect(existsSync(join(dir.path, 'prod', 'raw'))).toBe(true);

    await writeFile(pipeline, JSON.stringify({ site: sim.url, credentials: 'missing.json', warehouse: '../w.duckdb' }));
    const missing = await runCliInProcess(['sync', '--pipeline', pipeline]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`credentials file ${join(folder, 'missing.json')} does not exist`);
  });
});

// README: paths given as flags or variables (or left to their defaults) are relative to the working directory, and
// messages show the resolved path: a cron job's working directory is not the one the operator reads the log from.
describe('relative paths from flags, variables and defaults', () => {
  it('are named resolved against the working directory in messages', async () => {
    const cwd = join(dir.path, 'relative-cwd');
    await mkdir(cwd);
    try {
      const status = await runCliInProcess(['status', '--warehouse', 'missing.duckdb'], { cwd });
      expect(status.code).toBe(2);
      expect(status.stderr.trim()).toBe(
        `grantflow: no warehouse at ${join(cwd, 'missing.duckdb')}; run \`grantflow sync\` first or pass --warehouse`,
      );
      const sync = await runCliInProcess(['sync', '--site', sim.url], {
        cwd,
        env: { GRANTFLOW_CREDENTIALS: 'missing.json' },
      });
      expect(sync.code).toBe(2);
      expect(sync.stderr.trim()).toBe(`grantflow: credentials file ${join(cwd, 'missing.json')} does not exist`);
      const replay = await runCliInProcess(['replay', '--run', 'nope'], { cwd });
      expect(replay.code).toBe(2);
      expect(replay.stderr).toContain(`under ${join(cwd, 'data', 'raw')} `);
      const doctor = await runCliInProcess(['doctor', '--site', sim.url, '--credentials', 'missing.json'], { cwd });
      expect(doctor.stdout).toContain(` ${join(cwd, 'data', 'snapshots')} is writable\n`);
      expect(await readdir(cwd)).toEqual([]);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

/** Keys at the top level of one JSON object text, in order, repeats included (JSON.parse would hide a repeat). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (depth === 1 && /^\s*:/.test(line.slice(j + 1))) keys.push(JSON.parse(line.slice(i, j + 1)) as string);
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

describe('after a sync', () => {
  let runId = '';
  let syncLog = '';
  beforeAll(async () => {
    const r = await runCli([
      ...syncCliArgs(sim.url, dir.path, {
        credentials,
        warehouse: ['--warehouse', join(dir.path, 'w.duckdb')],
        rate: 500,
      }),
      '--log-level',
      'info',
    ]);
    expect(r.code).toBe(0);
    runId = /grantflow run ([^\s:(]+)/.exec(r.stdout)?.[1] ?? '';
    expect(runId).not.toBe('');
    syncLog = r.stderr;
  });

  it('logs JSON lines with no key twice (a log shipper keeps only the last)', () => {
    const lines = syncLog.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.some((l) => l.includes('"model built"'))).toBe(true);
    for (const line of lines) {
      const keys = topLevelKeys(line);
      expect(new Set(keys).size, line).toBe(keys.length);
    }
  });

  it('status lists the run, every stream and the row counts', async () => {
    const r = await runCliInProcess(['status', '--warehouse', join(dir.path, 'w.duckdb')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(runId);
    expect(r.stdout).toMatch(/succeeded/);
    const apps = sim.control.collection('applications').length;
    expect(r.stdout).toMatch(new RegExp(`^\\s+applications\\s+${apps}\\s+0$`, 'm'));
    // A fan-out stream: the run that read it whole, no record count, and its last full refresh.
    expect(r.stdout).toMatch(
      new RegExp(`^\\s+application_tasks\\s+${runId}\\s+-\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d$`, 'm'),
    );
  });

  it('demo --rate above what a sync accepts exits 2 in one line, before it deletes the old warehouse', async () => {
    const demoDir = join(dir.path, 'rate-demo');
    const target = join(demoDir, 'warehouse.duckdb');
    await (await openWarehouse(target)).close();
    const r = await runCli(['demo', '--dir', demoDir, '--scale', 'tiny', '--rate', '5000'], {
      timeoutMs: 60_000,
    });
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^grantflow: --rate: .*1000/)]);
    expect(existsSync(target)).toBe(true);
  });

  it('demo does not delete a warehouse another process holds open: exit 1, the file kept', async () => {
    const demoDir = join(dir.path, 'held-demo');
    const target = join(demoDir, 'warehouse.duckdb');
    await (await openWarehouse(target)).close();
    const holder = await holdDuckDBFile(target);
    try {
      const r = await runCliInProcess(['demo', '--dir', demoDir, '--scale', 'tiny']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`held open by process ${holder.pid}`);
      expect(existsSync(target)).toBe(true);
    } finally {
      holder.release();
    }
  });

  it.each(['-1', '4294967296', '1.5'])(
    'demo --seed %s is refused as sim refuses it: exit 2, nothing written',
    async (seed) => {
      const demoDir = join(dir.path, `seed-demo${seed}`);
      const r = await runCliInProcess(['demo', '--dir', demoDir, '--scale', 'tiny', '--seed', seed]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([
        `grantflow: --seed must be an integer from 0 to 4294967295, got "${seed}"`,
      ]);
      expect(existsSync(demoDir)).toBe(false);
    },
  );

  it.each([
    ['docs', 'dictionary', '--out', 'PATH/dd.md'],
    ['demo', '--dir', 'PATH/demo'],
  ])('%s with an output path under a regular file exits 2 with one line', async (...args) => {
    const file = join(dir.path, 'a-file');
    await writeFile(file, 'not a directory');
    const r = await runCliInProcess(args.map((a) => a.replace('PATH', file)));
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^grantflow: (?=.*a-file)(?=.*(not writable|cannot write))/),
    ]);
  });

  /** A bad value of each GRANTFLOW_* setting that a variable can hold (an empty one counts as unset). */
  const badEnv: Readonly<Record<string, string>> = {
    GRANTFLOW_SITE: 'not a url',
    GRANTFLOW_DUCKDB_MEMORY_LIMIT: 'lots',
    GRANTFLOW_SCHEMA: 'no-dashes',
    GRANTFLOW_LAND_RAW: 'maybe',
    GRANTFLOW_STREAMS: ',',
    GRANTFLOW_FULL_REFRESH: 'maybe',
    GRANTFLOW_FULL_REFRESH_AFTER_DAYS: '-1',
    GRANTFLOW_RATE: 'fast',
    GRANTFLOW_PER_PAGE: '0',
    GRANTFLOW_CONCURRENCY: '1000',
    GRANTFLOW_SITE_TIME_ZONE: 'Mars/Olympus',
    GRANTFLOW_RETAIN_SNAPSHOTS: '0',
    GRANTFLOW_MODELS: 'maybe',
    GRANTFLOW_SNAPSHOT: 'maybe',
    GRANTFLOW_LOG_LEVEL: 'loud',
  };
  const warehouseVars = ['GRANTFLOW_DUCKDB_MEMORY_LIMIT', 'GRANTFLOW_SCHEMA', 'GRANTFLOW_LOG_LEVEL'];
  const readOnlyCommands = [
    ['status', warehouseVars],
    ['models run', warehouseVars],
    ['models test', warehouseVars],
    ['snapshot', [...warehouseVars, 'GRANTFLOW_RETAIN_SNAPSHOTS']],
  ] as const;
  const argsOf = (name: string): string[] => [
    ...name.split(' '),
    '--warehouse',
    join(dir.path, 'w.duckdb'),
    ...(name === 'snapshot' ? ['--snapshots', join(dir.path, 'env-snapshots')] : []),
  ];

  it.each(readOnlyCommands)('%s ignores bad GRANTFLOW_* values of settings it does not use', async (name, used) => {
    const unused = Object.fromEntries(Object.entries(badEnv).filter(([k]) => !used.includes(k)));
    const r = await runCliInProcess(argsOf(name), { env: unused });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it.each(readOnlyCommands)('%s still refuses a bad value of each setting it uses (exit 2)', async (name, used) => {
    for (const variable of used) {
      const r = await runCliInProcess(argsOf(name), { env: { [variable]: badEnv[variable] } });
      expect(r.code, variable).toBe(2);
      expect(r.stderr.trim().split('\n'), variable).toEqual([
        expect.stringMatching(new RegExp(`^grantflow: environment variable ${variable}\\b`)),
      ]);
    }
  });

  it.each(['abc', '0', '-5', '2.5'])('status --runs %s is refused (exit 2)', async (runs) => {
    const r = await runCliInProcess(['status', '--warehouse', join(dir.path, 'w.duckdb'), '--runs', runs]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`grantflow: --runs must be a whole number from 1 up, got "${runs}"`);
  });

  it('status of a Postgres schema that does not exist exits 2 and creates no schema', async () => {
    const url = postgresUrl;
    const schema = clusterName('status_missing');
    const r = await runCliInProcess(['status', '--warehouse', url, '--schema', schema]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(new RegExp(`^grantflow: .* has no schema ${schema}; check --schema`));
    expect(await schemaExists(url, schema)).toBe(false);
  });

  it.each(['status', 'models run', 'models test', 'snapshot'])(
    '%s on a warehouse that does not exist exits 2 and creates nothing',
    async (name) => {
      const command = name.split(' ');
      const missing = join(dir.path, 'missing.duckdb');
      const snapshots = join(dir.path, 'missing-snapshots');
      const r = await runCliInProcess([
        ...command,
        '--warehouse',
        missing,
        ...(command[0] === 'snapshot' ? ['--snapshots', snapshots] : []),
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toMatch(/^grantflow: no warehouse at .*missing\.duckdb; run `grantflow sync` first/);
      expect(existsSync(missing)).toBe(false);
      expect(existsSync(`${missing}.wal`)).toBe(false);
    },
  );

  it.each(['models run', 'models test'])(
    '%s on a database grantflow never wrote (DuckDB file, Postgres schema) exits 2 and adds no table to it',
    async (name) => {
      const file = join(dir.path, `other-${name.replace(' ', '-')}.duckdb`);
      const instance = await DuckDBInstance.create(file);
      const connection = await instance.connect();
      await connection.run('CREATE TABLE sales (amount INTEGER)');
      connection.closeSync();
      instance.closeSync();
      const url = postgresUrl;
      const schema = clusterName('models_foreign');
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(
          `DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.sales (amount INTEGER)`,
        );
        for (const target of [
          ['--warehouse', file],
          ['--warehouse', url, '--schema', schema],
        ]) {
          const r = await runCliInProcess([...name.split(' '), ...target]);
          expect(r.code, target.join(' ')).toBe(2);
          expect(r.stdout, target.join(' ')).toBe('');
          expect(r.stderr.trim(), target.join(' ')).toMatch(
            /^grantflow: .* holds no grantflow data yet; run `grantflow sync` first$/,
          );
        }
        const reopened = await DuckDBInstance.create(file);
        const check = await reopened.connect();
        const duckTables = (await check.runAndReadAll('SELECT table_name FROM information_schema.tables')).getRows();
        check.closeSync();
        reopened.closeSync();
        expect(duckTables).toEqual([['sales']]);
        const { rows } = await client.query(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
          [schema],
        );
        expect(rows).toEqual([{ table_name: 'sales' }]);
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      }
    },
  );

  it('replay --run loads the landed pages into a new warehouse equal to the synced one', async () => {
    expect((await readdir(join(dir.path, 'raw', runId))).length).toBeGreaterThan(10);
    const target = join(dir.path, 'replayed.duckdb');
    const r = await runCliInProcess([
      'replay',
      '--run',
      runId,
      '--raw-dir',
      join(dir.path, 'raw'),
      '--warehouse',
      target,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/replayed \d+ records/);
    expect(summarize(await dumpWarehouse(target))).toEqual(summarize(await dumpWarehouse(join(dir.path, 'w.duckdb'))));
  });

  it('replay of an unknown run exits 2 with a clear message and creates no warehouse', async () => {
    const target = join(dir.path, 'x.duckdb');
    const r = await runCliInProcess([
      'replay',
      '--run',
      'nope',
      '--raw-dir',
      join(dir.path, 'raw'),
      '--warehouse',
      target,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/no raw pages for run nope/);
    expect(existsSync(target)).toBe(false);
  });

  it('replay --run of something that is not a run folder exits 2 in one line and creates no warehouse', async () => {
    const raw = join(dir.path, 'raw');
    await mkdir(join(raw, 'empty-run'));
    const landed = (await readdir(join(raw, runId)))[0]!;
    for (const [run, message] of [
      ['', /^grantflow: --run must be a run id, the name of a folder under .*raw; got ""$/],
      ['.', /^grantflow: --run must be a run id/],
      [`../raw/${runId}`, /^grantflow: --run must be a run id/],
      [`${runId}/${landed}`, /^grantflow: --run must be a run id/],
      ['empty-run', /^grantflow: no raw pages for run empty-run in .*empty-run \(no <stream>\.jsonl\.gz file/],
    ] as const) {
      const target = join(dir.path, 'not-a-run.duckdb');
      const r = await runCliInProcess(['replay', '--run', run, '--raw-dir', raw, '--warehouse', target]);
      expect(r.code, run).toBe(2);
      expect(r.stdout, run).toBe('');
      expect(r.stderr.trim().split('\n'), run).toHaveLength(1);
      expect(r.stderr.trim(), run).toMatch(message);
      expect(existsSync(target), run).toBe(false);
    }
  });
});
