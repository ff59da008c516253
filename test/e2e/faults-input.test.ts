/**
 * Bad input: each case prints ONE clear `grantflow: ...` line on stderr (no stack), exits with the documented code
 * (2: configuration) and writes nothing: no warehouse file, no snapshot or raw directory, the credentials file
 * byte-for-byte unchanged and still 0600. In process (`cliInProcess`, main.ts's own code path): the subject is what a
 * run says and leaves, not the process; one case at a time, as in-process runs go.
 */
import { createServer, type Server } from 'node:http';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { startSite, tempDir, writeCredentials, syncCliArgs } from '../support/harness.ts';
import { assertNoSecretsLeaked, cliInProcess, recordIssuedSecrets } from '../support/faults.ts';

let sim: SimulatorHandle;
let revokedSim: SimulatorHandle;
let htmlSite: Server;
let htmlUrl = '';
let work: { path: string; remove: () => Promise<void> };

beforeAll(async () => {
  recordIssuedSecrets();
  sim = await startSite({ scale: 'tiny', seed: 3 });
  revokedSim = await startSite({ scale: 'tiny', seed: 3 });
  work = await tempDir('grantflow-faults-input-');
  // A web server that is not the API: every path answers 200 with a web page.
  htmlSite = createServer((req, res) => {
    // An http:// site that moved to https (the kind of redirect a wrong --site meets).
    if (req.url?.startsWith('/moved/')) {
      res.writeHead(301, { location: `https://grants.example.org${req.url.slice('/moved'.length)}` });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><title>Welcome</title></head><body><h1>Our grants</h1></body></html>');
  });
  await new Promise<void>((done) => htmlSite.listen(0, '127.0.0.1', done));
  const address = htmlSite.address();
  htmlUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  await sim?.close();
  await revokedSim?.close();
  await new Promise((done) => htmlSite?.close(done));
  await work?.remove();
});

interface InputCase {
  readonly name: string;
  /** Prepares the case directory; returns the extra CLI arguments (they override the defaults). */
  readonly prepare: (dir: string) => Promise<string[]>;
  readonly message: RegExp;
  /** The credentials file is absent in this case. */
  readonly noCredentials?: boolean;
}

const cases: InputCase[] = [
  {
    name: 'a corrupt credentials file',
    prepare: async (dir) => {
      await writeFile(join(dir, 'creds.json'), '{"client_id": "abc", "client_secret": ', { mode: 0o600 });
      return [];
    },
    message: /creds\.json/,
  },
  {
    name: 'a missing credentials file',
    prepare: () => Promise.resolve(['--credentials', join(work.path, 'nowhere', 'creds.json')]),
    message: /nowhere.creds\.json/,
    noCredentials: true,
  },
  {
    name: 'revoked credentials (invalid_grant)',
    prepare: async (dir) => {
      await writeCredentials(revokedSim, join(dir, 'creds.json'));
      revokedSim.control.revokeAllCredentials();
      return ['--site', revokedSim.url];
    },
    message: /invalid_grant/,
  },
  {
    name: 'a site URL on a port nothing listens on',
    prepare: () => Promise.resolve(['--site', 'http://127.0.0.1:9']),
    message: /nothing answers at http:\/\/127\.0\.0\.1:9 .*--site/,
  },
  {
    name: 'a site URL whose path 404s',
    prepare: () => Promise.resolve(['--site', `${sim.url}/not-the-api`]),
    message: /not found \(HTTP 404\).*--site/,
  },
  {
    name: 'a site answering an HTML page',
    prepare: () => Promise.resolve(['--site', htmlUrl]),
    message: /does not answer like the grant API.*--site/,
  },
  {
    name: 'a site URL that redirects',
    prepare: () => Promise.resolve(['--site', `${htmlUrl}/moved`]),
    message: /redirects \(HTTP 301 to https:\/\/grants\.example\.org\/api\/programs\/.*--site/,
  },
  {
    name: 'an unwritable snapshot directory (a path under a regular file)',
    prepare: async (dir) => {
      await writeFile(join(dir, 'a-file'), 'not a directory');
      return ['--snapshots', join(dir, 'a-file', 'snapshots')];
    },
    message: /a-file/,
  },
  {
    name: 'an unwritable raw page directory (a path under a regular file)',
    prepare: async (dir) => {
      await writeFile(join(dir, 'a-file'), 'not a directory');
      return ['--raw-dir', join(dir, 'a-file', 'raw')];
    },
    message: /raw page directory .*a-file.*--raw-dir/,
  },
  {
    name: 'a pipeline file that is not JSON',
    prepare: async (dir) => {
      await writeFile(join(dir, 'pipeline.json'), '{"perPage": 100,');
      return ['--pipeline', join(dir, 'pipeline.json')];
    },
    message: /pipeline\.json/,
  },
  {
    name: 'a pipeline file with an unknown key',
    prepare: async (dir) => {
      await writeFile(join(dir, 'pipeline.json'), JSON.stringify({ perPage: 100, perPages: 50 }));
      return ['--pipeline', join(dir, 'pipeline.json')];
    },
    message: /perPages/,
  },
  {
    name: 'a pipeline file with a value of the wrong type',
    prepare: async (dir) => {
      await writeFile(join(dir, 'pipeline.json'), JSON.stringify({ perPage: 'many' }));
      return ['--pipeline', join(dir, 'pipeline.json')];
    },
    message: /perPage/,
  },
  {
    name: 'a site URL ending in /api',
    prepare: () => Promise.resolve(['--site', `${sim.url}/api`]),
    message: /--site: must be the site's root URL .*without \/api/,
  },
  {
    name: 'a DuckDB memory limit of 0MB',
    prepare: () => Promise.resolve(['--duckdb-memory-limit', '0MB']),
    message: /--duckdb-memory-limit: must be at least 64MB/,
  },
  {
    name: 'a DuckDB memory limit of 1KB',
    prepare: () => Promise.resolve(['--duckdb-memory-limit', '1KB']),
    message: /--duckdb-memory-limit: must be at least 64MB/,
  },
  {
    name: 'an unknown stream name',
    prepare: () => Promise.resolve(['--streams', 'applications,grant_wishes']),
    message: /unknown stream "grant_wishes"/,
  },
  {
    name: 'a Postgres warehouse URL that does not answer',
    prepare: () => Promise.resolve(['--warehouse', 'postgres://postgres@127.0.0.1:1/test']),
    message: /cannot connect to Postgres warehouse postgres:\/\/postgres@127\.0\.0\.1:1\/test/,
  },
];

/** Every file and directory under `dir`, relative, for "nothing written" comparisons. */
function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1) + (e.isDirectory() ? '/' : ''))
    .sort();
}

describe('bad input is refused with one line, exit 2, nothing written', () => {
  it.each(cases.map((c, i) => ({ ...c, i })))('$name', async ({ prepare, message, noCredentials, i }) => {
    const dir = join(work.path, `case-${i}`);
    await mkdir(dir);
    const creds = join(dir, 'creds.json');
    if (!existsSync(creds) && !noCredentials) await writeCredentials(sim, creds);
    const extra = await prepare(dir);
    const credsBefore = noCredentials ? null : readFileSync(creds, 'utf8');
    const filesBefore = listFiles(dir);

    const args = syncCliArgs(sim.url, dir, { credentials: creds, snapshot: true });
    // Later flags win in commander: the case's own value replaces the default above.
    const result = await cliInProcess([...args, ...extra]);

    expect(result.code, result.stderr).toBe(2);
    // Log lines (JSON, e.g. "retrying") may precede it; the error itself is one plain line, no stack.
    const plain = result.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));
    expect(plain).toHaveLength(1);
    expect(plain[0]).toMatch(/^grantflow: /);
    expect(plain[0]).toMatch(message);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.stdout).toBe('');

    expect(listFiles(dir)).toEqual(filesBefore);
    expect(existsSync(join(dir, 'warehouse.duckdb'))).toBe(false);
    if (credsBefore !== null) {
      expect(readFileSync(creds, 'utf8')).toBe(credsBefore);
      expect(statSync(creds).mode & 0o777).toBe(0o600);
    }
  });
});

describe('secrets', () => {
  it('no secret appeared in any output', () => {
    assertNoSecretsLeaked();
  });
});
