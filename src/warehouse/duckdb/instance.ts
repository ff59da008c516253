import { mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DuckDBInstance, version } from '@duckdb/node-api';
import { ConfigError, LockedError } from '../../util/errors.ts';
import { isDirectory, pathProblem } from '../../util/path-problem.ts';
import { pidAlive } from '../../util/process-alive.ts';

/**
 * DuckDB locks the file per process, so two instances on one file inside the same process would not see each
 * other's lock: instances are shared per path and reference-counted.
 */
const open = new Map<string, { instance: DuckDBInstance; refs: number; readOnly: boolean }>();

export function lockFilePath(path: string): string {
  return `${path}.lock`;
}

/**
 * A read-only opener's note, one per process: any number of readers share the file, and DuckDB names any one of them
 * to a writer it refuses, so each reader must be findable by its pid (one shared note names only one of them).
 */
export function readerNotePath(path: string, pid: number): string {
  return `${lockFilePath(path)}.${pid}`;
}

interface LockInfo {
  pid: number;
  owner?: string;
  startedAt?: string;
}

export function readLockInfo(path: string): LockInfo | null {
  return readNote(lockFilePath(path));
}

function readNote(file: string): LockInfo | null {
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockInfo>;
    return typeof info.pid === 'number' ? (info as LockInfo) : null;
  } catch {
    return null;
  }
}

/**
 * The live grantflow run holding the file, if the process DuckDB names (`known`; null when it names none) left a
 * note: the writer's (or an older version's reader's) `.lock`, or a reader's own note.
 */
function grantflowHolder(path: string, known: number | null): LockInfo | null {
  const notes = [readLockInfo(path), known === null ? null : readNote(readerNotePath(path, known))];
  return notes.find((n) => n !== null && pidAlive(n.pid) && (known === null || known === n.pid)) ?? null;
}

export function lockedMessage(path: string, pid: number | null, owner?: string): string {
  const holder = pid === null ? 'another process' : `pid ${pid}${owner ? `, ${owner}` : ''}`;
  return `warehouse ${path} is in use by another grantflow run (${holder}); wait for it to finish or stop it, then retry`;
}

/**
 * DuckDB's file lock held by a process that left no grantflow lock note: an analyst's shell or a BI tool. A reader
 * (`readOnly`) is refused only by a process that writes, which could open the file read-only instead.
 */
export function lockedByOtherMessage(path: string, pid: number | null, readOnly = false): string {
  const holder = pid === null ? 'another process' : `process ${pid}`;
  if (readOnly)
    return (
      `warehouse ${path} is held open for writing by ${holder}, not a grantflow run (a duckdb shell or BI tool?); ` +
      'close it, or have it open the file read-only (duckdb -readonly), then retry'
    );
  return (
    `warehouse ${path} is held open by ${holder}, not a grantflow run (a duckdb shell or BI tool?); ` +
    'close it, then retry. To read while syncs run, read the Parquet snapshots or a copy of the file'
  );
}

/**
 * A grantflow run opens the file before it writes its note (migrations come between), so a run refused in that window
 * would blame "not a grantflow run (a duckdb shell?)". While the holder may be a grantflow run (a Node process, or
 * one `/proc` cannot tell about), its note is waited for briefly; a refusal costs that wait, a success nothing.
 */
const noteWaitMs = 3_000;

async function noteOfHolder(path: string, known: number | null): Promise<LockInfo | null> {
  const until = Date.now() + noteWaitMs;
  for (;;) {
    const info = grantflowHolder(path, known);
    if (info || Date.now() >= until || !mayBeGrantflow(known)) return info;
    await sleep(50);
  }
}

function mayBeGrantflow(pid: number | null): boolean {
  if (pid === null) return true;
  if (!pidAlive(pid)) return false;
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return /node|grantflow/i.test(basename(argv0));
  } catch {
    return true;
  }
}

export interface InstanceSettings {
  /** DuckDB `memory_limit`: past it, DuckDB spills to `<file>.tmp/` (or fails with its out-of-memory error). */
  readonly memoryLimit: string;
  /**
   * Open the existing file read-only: DuckDB lets any number of processes read a file while none writes it, so a
   * command that only reads runs alongside analysts' read-only connections (and is refused while a writer holds it).
   */
  readonly readOnly?: boolean;
}

/**
 * WAL size that triggers a checkpoint. DuckDB's 16 MB default checkpoints after nearly every commit of a big load,
 * and a checkpoint rewrites the row groups of every table touched since the last one (~130 ms per commit on a
 * large replay). With 1 GB, a load checkpoints a few times and once on close; the WAL on disk may reach that size.
 */
const checkpointThreshold = '1GB';

export async function acquireInstance(
  target: string,
  settings: InstanceSettings,
): Promise<{ path: string; instance: DuckDBInstance; readOnly: boolean }> {
  const path = resolve(target);
  const readOnly = settings.readOnly === true;
  const shared = open.get(path);
  if (shared) {
    // A writer's instance serves a reader too; a reader's cannot serve a writer (DuckDB would refuse another process).
    if (shared.readOnly && !readOnly)
      throw new LockedError(`warehouse ${path} is open read-only in this process; close it first, then retry`);
    shared.refs += 1;
    return { path, instance: shared.instance, readOnly: shared.readOnly };
  }
  // DuckDB's own messages for these name no setting and read like a crash ("IO Error: Could not read from file").
  if (isDirectory(path))
    throw new ConfigError(`DuckDB warehouse ${path} is a directory, not a file; choose another --warehouse`);
  if (!readOnly) createParentDirectory(path);
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(path, {
      memory_limit: settings.memoryLimit,
      checkpoint_threshold: checkpointThreshold,
      ...(readOnly ? { access_mode: 'READ_ONLY' } : {}),
    });
  } catch (e) {
    const message = (e as Error).message;
    if (/Could not set lock on file/i.test(message)) {
      const holder = Number(/PID (\d+)/.exec(message)?.[1] ?? NaN);
      const known = Number.isNaN(holder) ? null : holder;
      const info = await noteOfHolder(path, known);
      throw new LockedError(
        info ? lockedMessage(path, info.pid, info.owner) : lockedByOtherMessage(path, known, readOnly),
      );
    }
    throw new ConfigError(`cannot open DuckDB warehouse ${path}: ${message.split('\n')[0] ?? message}`);
  }
  open.set(path, { instance, refs: 1, readOnly });
  return { path, instance, readOnly };
}

function createParentDirectory(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (e) {
    throw new ConfigError(
      `cannot create the directory of DuckDB warehouse ${path} (${pathProblem(e, dirname(path))}); choose another --warehouse`,
      { cause: e },
    );
  }
}

export function releaseInstance(path: string): void {
  const shared = open.get(path);
  if (!shared) return;
  shared.refs -= 1;
  if (shared.refs > 0) return;
  open.delete(path);
  shared.instance.closeSync();
}

/** The DuckDB library's version (e.g. `v1.5.5`), without opening a database. */
export function duckdbVersion(): string {
  return version();
}
