/**
 * Shared pieces of the fault suite: every secret the simulator issues, every output a run printed, and the checks
 * each fault case ends with (warehouse equals the reference, no duplicate keys, credentials file intact and 0600,
 * no half-written Parquet).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';

import { join } from 'node:path';

import { createHash } from 'node:crypto';

import { constants, createGunzip } from 'node:zlib';

import type { ChildProcess } from 'node:child_process';

import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet';

import { expect } from 'vitest';

import { TokenStore } from '../../src/simulator/auth.ts';

import type { SimulatorHandle } from '../../src/simulator/index.ts';

import type { Manifest } from '../../src/snapshot/index.ts';

import {
  dumpWarehouse,
  runCli,
  startSite,
  summarize,
  syncCliArgs,
  tempDir,
  writeCredentials,
  type CliResult,
  type TableDump,
} from './harness.ts';
import { runCliInProcess } from './cli-in-process.ts';
import { tables } from '../../src/streams/registry.ts';

/** Every client secret and token any simulator in this process issued (the token store is wrapped once). */
export const issuedSecrets = new Set<string>();
let wrapped = false;

export function recordIssuedSecrets(): void {
  if (wrapped) return;
  wrapped = true;
  const issue = TokenStore.prototype.issue;
  const refresh = TokenStore.prototype.refresh;
  TokenStore.prototype.issue = function (this: TokenStore, keepExisting?: boolean) {
    const c = issue.call(this, keepExisting);
    for (const s of [c.client_secret, c.access_token, c.refresh_token]) issuedSecrets.add(s);
    return c;
  };
  TokenStore.prototype.refresh = function (this: TokenStore, body: Record<string, string>) {
    const reply = refresh.call(this, body);
    for (const k of ['access_token', 'refresh_token'] as const) {
      const v = reply.body?.[k];
      if (typeof v === 'string') issuedSecrets.add(v);
    }
    return reply;
  };
}

/** Everything runs printed, so the suite can prove no secret ever reached a terminal or a log. */
export const outputs: string[] = [];

export async function cli(args: readonly string[], options: Parameters<typeof runCli>[1] = {}): Promise<CliResult> {
  const result = await runCli(args, options);
  outputs.push(result.stdout, result.stderr);
  return result;
}

/** `cli` in the test's process (runCliInProcess), for a run whose result is the subject rather than the process. */
export async function cliInProcess(
  args: readonly string[],
  options: Parameters<typeof runCliInProcess>[1] = {},
): Promise<CliResult> {
  const result = await runCliInProcess(args, options);
  outputs.push(result.stdout, result.stderr);
  return result;
}

/** Reads a credentials file, remembering its secrets, and checks it is whole JSON with mode 0600. */
export function checkCredentialsFile(path: string): Record<string, string> {
  expect(statSync(path).mode & 0o777).toBe(0o600);
  const creds = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
  for (const k of ['client_id', 'client_secret', 'access_token', 'refresh_token']) {
    expect(typeof creds[k], `credentials field ${k}`).toBe('string');
  }
  for (const k of ['client_secret', 'access_token', 'refresh_token']) issuedSecrets.add(creds[k] ?? '');
  return creds;
}

/** Fails if any secret appears in any collected output or in the given extra texts (log files). */
export function assertNoSecretsLeaked(extra: readonly string[] = []): void {
  const texts = [...outputs, ...extra];
  const secrets = [...issuedSecrets].filter((s) => s.length >= 8);
  expect(secrets.length).toBeGreaterThan(0);
  const leaks: string[] = [];
  for (const s of secrets) {
    texts.forEach((t, i) => {
      if (t.includes(s)) leaks.push(`secret ${s.slice(0, 4)}… in output #${i}`);
    });
  }
  expect(leaks).toEqual([]);
}

/** The warehouse equals the reference in every catalog table, and no table holds a primary key twice. */
export async function expectSameWarehouse(
  target: string,
  reference: Record<string, TableDump>,
  options: { schema?: string } = {},
): Promise<void> {
  const dump = await dumpWarehouse(target, options);
  expect(summarize(dump)).toEqual(summarize(reference));
  for (const table of tables) {
    const rows = dump[table.name]?.content ?? [];
    const keys = rows.map((r) => JSON.stringify(table.primaryKey.map((c) => String(r[c]))));
    expect(new Set(keys).size, `duplicate keys in ${table.name}`).toBe(keys.length);
  }
}

/** Every `*.parquet` is a complete file (its footer reads) and the manifest lists only complete, matching files. */
export async function checkSnapshotDir(dir: string): Promise<{ files: number; manifestTables: number }> {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.parquet')) files.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  for (const f of files) {
    const meta = await parquetMetadataAsync(await asyncBufferFromFile(f)).catch((e: unknown) => {
      throw new Error(`half-written Parquet file ${f}: ${String(e)}`);
    });
    expect(meta.num_rows).toBeGreaterThanOrEqual(0n);
  }
  const manifestPath = join(dir, '_manifest.json');
  if (!existsSync(manifestPath)) return { files: files.length, manifestTables: 0 };
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    tables: Record<string, { path: string; rows: number; sha256: string }>;
  };
  for (const [table, entry] of Object.entries(manifest.tables)) {
    const path = join(dir, entry.path);
    expect(existsSync(path), `manifest entry of ${table} points at a missing file`).toBe(true);
    const sha = createHash('sha256').update(readFileSync(path)).digest('hex');
    expect(sha, `manifest checksum of ${table}`).toBe(entry.sha256);
    const meta = await parquetMetadataAsync(await asyncBufferFromFile(path));
    expect(Number(meta.num_rows), `rows of ${table}`).toBe(entry.rows);
  }
  return { files: files.length, manifestTables: Object.keys(manifest.tables).length };
}

export const readManifestFile = (snapshots: string): Manifest =>
  JSON.parse(readFileSync(join(snapshots, '_manifest.json'), 'utf8')) as Manifest;

/**
 * The start of a snapshot-writing test: a tiny site, and a DuckDB warehouse under `<work>/base` synced once with its
 * snapshots (2 kept, so the one a reader may be using stays), in process; `tables` in the order a snapshot writes them.
 */
export async function siteSyncedWithSnapshots(
  seed: number,
  prefix: string,
): Promise<{ sim: SimulatorHandle; work: Awaited<ReturnType<typeof tempDir>>; base: string; tables: string[] }> {
  const sim = await startSite({ scale: 'tiny', seed });
  const work = await tempDir(prefix);
  const base = join(work.path, 'base');
  await writeCredentials(sim, join(work.path, 'creds.json'));
  const synced = await cliInProcess([
    ...syncCliArgs(sim.url, base, { snapshot: true, credentials: join(work.path, 'creds.json') }),
    '--retain-snapshots',
    '2',
  ]);
  expect(synced.code, synced.stderr).toBe(0);
  const tables = Object.keys(readManifestFile(join(base, 'snapshots')).tables);
  expect(tables.length).toBeGreaterThan(3);
  return { sim, work, base, tables };
}

/** Kills `child` with SIGKILL when `line` has appeared `nth` times on its stderr (then after `delayMs`). */
export function killOnStderr(child: ChildProcess, line: string, nth: number, delayMs = 0): void {
  let seen = 0;
  let buffered = '';
  child.stderr?.on('data', (d: Buffer) => {
    buffered += d.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const p of parts) {
      if (!p.includes(line)) continue;
      seen++;
      if (seen === nth) setTimeout(() => child.kill('SIGKILL'), delayMs);
    }
  });
}

/** Kills `child` with SIGKILL as soon as `reached()` holds (polled every 2 ms), e.g. a count of site requests. */
export function killWhen(child: ChildProcess, reached: () => boolean): void {
  const timer = setInterval(() => {
    if (child.exitCode !== null || child.signalCode !== null) return clearInterval(timer);
    if (reached()) {
      clearInterval(timer);
      child.kill('SIGKILL');
    }
  }, 2);
}

/** Resolves once `reached()` holds (polled every 2 ms); rejects after `timeoutMs`. */
export function waitFor(reached: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (reached()) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() > deadline) {
        clearInterval(timer);
        reject(new Error(`condition not reached within ${timeoutMs} ms`));
      }
    }, 2);
  });
}

/** The text of every raw page file (`*.jsonl.gz`, up to a cut left by a kill) and `*.log` file under `dir`. */
export async function landedTexts(dir: string): Promise<string[]> {
  const out: string[] = [];
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.jsonl.gz') || e.name.endsWith('.log')) files.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  for (const p of files) out.push(p.endsWith('.log') ? readFileSync(p, 'utf8') : await gunzipTolerant(p));
  return out;
}

/** Whatever decompresses before a cut (a killed run's file may be cut, with the resumed run's data after it). */
function gunzipTolerant(path: string): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const gunzip = createGunzip({ finishFlush: constants.Z_SYNC_FLUSH });
    const done = (): void => resolve(Buffer.concat(chunks).toString('utf8'));
    gunzip.on('data', (c: Buffer) => chunks.push(c));
    gunzip.on('error', done);
    gunzip.on('end', done);
    gunzip.end(readFileSync(path));
  });
}
