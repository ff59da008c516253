/**
 * Shared pieces of the end-to-end suites: a simulated site, a sync run in process or through the real CLI, and
 * table dumps that two warehouses (or two runs) can be compared by.
 */
import { spawn } from 'node:child_process';

import { createServer, request as httpRequest } from 'node:http';

import type { AddressInfo } from 'node:net';

import { createHash } from 'node:crypto';

import { existsSync } from 'node:fs';

import { readFile, rename, writeFile } from 'node:fs/promises';

import { deserialize, serialize } from 'node:v8';

import { inject } from 'vitest';

import { join } from 'node:path';

import { settingsSchema, type SettingsInput } from '../../src/config/settings.ts';

import { allColumns, hasMetadata, openWarehouse } from '../../src/warehouse/index.ts';

import { runSync, type SyncRequest, type SyncResult } from '../../src/pipeline/sync.ts';
import { reportAfterSync } from '../../src/report/after-sync.ts';

import {
  collectionNames,
  startSimulator,
  type SimulatorHandle,
  type SimulatorOptions,
} from '../../src/simulator/index.ts';

import { pino } from 'pino';

import { silentLogger, type Logger } from '../../src/util/logger.ts';

import type { CellValue } from '../../src/normalize/table-def.ts';
import { tables } from '../../src/streams/registry.ts';
import type { StreamCatalog } from '../../src/streams/catalog.ts';
import { cliPath, packageRoot } from '../../src/util/package-root.ts';
import { countCliStart } from './cli-count.ts';
import { suiteDuckdbThreads } from './suite-duckdb.ts';
import { tempDir } from './temp-dir.ts';

export {
  analystSession,
  clusterName,
  dropPostgresSchema,
  postgresSchema,
  postgresUrl,
  postgresUrlAs,
} from './postgres.ts';

export { tempDir };

/** The CLI a user runs, for tests that start it themselves (in a terminal, as another user). */
export { cliPath };

/** A simulated site without a rate limit unless asked: most suites test behaviour, not pacing. */
export function startSite(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  return startSimulator({ scale: 'tiny', seed: 7, rate: 0, ...options });
}

export async function writeCredentials(sim: SimulatorHandle, path: string): Promise<string> {
  await writeFile(path, JSON.stringify(sim.credentials), { mode: 0o600 });
  return path;
}

/** A simulated site, its credentials and a DuckDB warehouse path in a temp folder; `remove` undoes all of it. */
export async function siteWithWarehouse(options: SimulatorOptions = {}): Promise<{
  sim: SimulatorHandle;
  dir: string;
  credentials: string;
  warehouse: string;
  remove: () => Promise<void>;
}> {
  const sim = await startSite(options);
  const dir = await tempDir();
  return {
    sim,
    dir: dir.path,
    credentials: await writeCredentials(sim, join(dir.path, 'creds.json')),
    warehouse: join(dir.path, 'w.duckdb'),
    remove: async () => {
      await sim.close();
      await dir.remove();
    },
  };
}

/** A logger that keeps every line it writes, parsed: for tests of what grantflow logs. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines };
}

/**
 * One in-process sync with test-friendly settings (fast site, no snapshots unless asked); `request.catalog`: the
 * streams it knows, when a test adds one (default: the built-in ones).
 */
export async function syncOnce(
  sim: SimulatorHandle,
  settings: SettingsInput & { credentials: string },
  request: Pick<SyncRequest, 'catalog'> = {},
): Promise<SyncResult> {
  return runSync({
    ...request,
    settings: settingsSchema.parse({
      site: sim.url,
      rate: 1000,
      snapshot: false,
      landRaw: false,
      logLevel: 'silent',
      duckdbThreads: suiteDuckdbThreads,
      ...settings,
    }),
    logger: silentLogger,
    env: {},
    tty: false,
    // As the CLI does: the `report` setting writes the report after the run.
    afterSync: reportAfterSync,
  });
}

/** `syncOnce` without models and their data tests: for cases about extraction and loading alone. */
export function syncWithoutModels(
  sim: SimulatorHandle,
  settings: SettingsInput & { credentials: string },
): Promise<SyncResult> {
  return syncOnce(sim, { models: false, ...settings });
}

/**
 * The warehouse of one uninterrupted sync of `sim` into `<dir>/<name>.duckdb`: what a fault case is compared with.
 * Computed once per test run for what the site serves and the settings (see referenceKey), then read from the run's
 * cache folder by every file that asks again.
 */
export async function referenceDump(
  sim: SimulatorHandle,
  dir: string,
  name = 'reference',
  settings: SettingsInput = {},
): Promise<Record<string, TableDump>> {
  const cacheDir = inject('referenceCacheDir');
  const cached = cacheDir === undefined ? undefined : join(cacheDir, `${referenceKey(sim, settings)}.v8`);
  if (cached !== undefined && existsSync(cached))
    return deserialize(await readFile(cached)) as Record<string, TableDump>;
  const credentials = await writeCredentials(sim, join(dir, `${name}-creds.json`));
  const warehouse = join(dir, `${name}.duckdb`);
  const result = await syncOnce(sim, { ...settings, credentials, warehouse });
  if (result.status !== 'succeeded') throw new Error(`the reference sync did not succeed: ${result.status}`);
  const dump = await dumpWarehouse(warehouse);
  if (cached !== undefined) {
    // Two files may compute the same key at once: each writes its own temporary, and either rename wins.
    const temporary = `${cached}.${process.pid}.tmp`;
    await writeFile(temporary, serialize(dump));
    await rename(temporary, cached);
  }
  return dump;
}

/**
 * What a reference sync's result depends on: every collection the site serves, its settings (pacing left out: it
 * changes when pages arrive, not what they hold) and the sync's settings.
 */
function referenceKey(sim: SimulatorHandle, settings: SettingsInput): string {
  const { latency: _latency, rate: _rate, ...served } = sim.control.config;
  const data = collectionNames.map((collection) => sim.control.collection(collection));
  return createHash('sha256').update(JSON.stringify({ data, served, settings })).digest('hex');
}

export interface SyncCliOptions {
  /** Default `<dir>/creds.json`. */
  readonly credentials?: string;
  /** Default `--warehouse <dir>/warehouse.duckdb`; a Postgres target passes `--warehouse URL --schema S`. */
  readonly warehouse?: readonly string[];
  /** Snapshots go to `<dir>/snapshots` when true. Default false. */
  readonly snapshot?: boolean;
  /** Requests per second the client uses. Default 1000 (most tests check behaviour, not pacing). */
  readonly rate?: number;
}

/** Arguments of `grantflow sync` against `site` with every output under `dir`, as a user would type them. */
export function syncCliArgs(site: string, dir: string, options: SyncCliOptions = {}): string[] {
  return [
    'sync',
    '--site',
    site,
    '--credentials',
    options.credentials ?? join(dir, 'creds.json'),
    ...(options.warehouse ?? ['--warehouse', join(dir, 'warehouse.duckdb')]),
    '--snapshot',
    String(options.snapshot ?? false),
    '--snapshots',
    join(dir, 'snapshots'),
    '--raw-dir',
    join(dir, 'raw'),
    '--rate',
    String(options.rate ?? 1000),
  ];
}

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node bin/grantflow.js ...` as a user would; `onSpawn` gets the child (to kill it mid-run). */
export function runCli(
  args: readonly string[],
  options: {
    env?: NodeJS.ProcessEnv;
    timeoutMs?: number;
    onSpawn?: (child: ReturnType<typeof spawn>) => void;
    /** Working directory (default the repository root): where relative paths land. */
    cwd?: string;
  } = {},
): Promise<CliResult> {
  countCliStart();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: options.cwd ?? packageRoot,
      env: { ...process.env, GRANTFLOW_LOG_LEVEL: 'warn', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    options.onSpawn?.(child);
  });
}

/** Columns that differ between two runs by design (when and by which run a row was written, or its file fetched). */
const runColumns = new Set(['_extracted_at', '_run_id', 'downloaded_at']);

export interface TableDump {
  readonly rows: number;
  /** sha256 over the rows in key order, run columns left out, `_deleted_at` reduced to deleted or not. */
  readonly checksum: string;
  readonly content: readonly Record<string, CellValue>[];
}

/**
 * Every catalog table (and optionally models) of a warehouse, in key order, comparable across dialects and runs;
 * `catalog`: the one its syncs were handed (default: the built-in streams).
 */
export async function dumpWarehouse(
  target: string,
  options: { schema?: string; duckdbSchema?: string; models?: readonly string[]; catalog?: StreamCatalog } = {},
): Promise<Record<string, TableDump>> {
  const warehouse = await openWarehouse(target, {
    schema: options.schema,
    ...(options.duckdbSchema ? { duckdbSchema: options.duckdbSchema } : {}),
    logger: silentLogger,
  });
  const out: Record<string, TableDump> = {};
  try {
    for (const table of options.catalog?.tables ?? tables) {
      const columns = (hasMetadata(table) ? allColumns(table) : table.columns)
        .map((c) => c.name)
        .filter(
          (c) =>
            !runColumns.has(c) && !(table.name === '_grantflow_quarantine' && c === 'run_id') && c !== 'quarantined_at',
        );
      const select = columns
        .map((c) => (c === '_deleted_at' ? '(_deleted_at IS NOT NULL) AS _deleted' : `"${c}"`))
        .join(', ');
      const order = table.primaryKey.map((c) => `"${c}"`).join(', ');
      out[table.name] = toDump(await warehouse.query(`SELECT ${select} FROM ${table.name} ORDER BY ${order}`));
    }
    for (const model of options.models ?? []) {
      const rows = await warehouse.query(`SELECT * FROM ${model}`);
      const sorted = [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      out[`model:${model}`] = toDump(sorted);
    }
  } finally {
    await warehouse.close();
  }
  return out;
}

function toDump(rows: Record<string, CellValue>[]): TableDump {
  const hash = createHash('sha256');
  for (const r of rows)
    hash.update(JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) + '\n');
  return { rows: rows.length, checksum: hash.digest('hex'), content: rows };
}

/** Table name → row count and checksum only, for readable assertion diffs. */
export function summarize(dump: Record<string, TableDump>): Record<string, string> {
  return Object.fromEntries(Object.entries(dump).map(([t, d]) => [t, `${d.rows} rows ${d.checksum.slice(0, 16)}`]));
}

export const modelNames = [
  'award_rates',
  'reviewer_load',
  'funding_flow',
  'application_funnel',
  'decision_latency',
  'review_progress',
  'fund_utilization',
  'award_rates_by_year',
  'stage_aging',
] as const;

/**
 * Models whose rows depend on when their sync ran: stage_aging counts days up to the time its sync read the
 * applications. Two syncs of one site agree on every other model, not on these.
 */
export const clockModels: ReadonlySet<string> = new Set(['stage_aging']);

/** A proxy in front of a site: `before` runs as each request arrives, `rewrite` may change a 200 GET body. */
export async function proxySite(
  target: string,
  before: (url: URL) => Promise<void> | void,
  rewrite?: (url: URL, body: string) => string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', upstream);
    void (async () => {
      await before(url);
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (up) => {
          const body: Buffer[] = [];
          up.on('data', (c: Buffer) => body.push(c));
          up.on('end', () => {
            let text = Buffer.concat(body).toString('utf8');
            if (rewrite && up.statusCode === 200 && req.method === 'GET') text = rewrite(url, text);
            const headers = { ...up.headers };
            delete headers['content-length'];
            delete headers['transfer-encoding'];
            res.writeHead(up.statusCode ?? 502, headers);
            res.end(text);
          });
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(Buffer.concat(chunks));
    })();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((done) => {
        server.close(() => done());
        server.closeAllConnections(); // the client keeps connections alive
      }),
  };
}
