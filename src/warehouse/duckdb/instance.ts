import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DuckDBInstance, version } from '@duckdb/node-api';
import { ConfigError, LockedError } from '../../util/errors.ts';
import { isDirectory, pathProblem } from '../../util/path-problem.ts';

/**
 * DuckDB locks the file per process, so two instances on one file inside the same process would not see each
 * other's lock: instances are shared per path and reference-counted.
 */
const open = new Map<string, { instance: DuckDBInstance; refs: number }>();

export function lockFilePath(path: string): string {
  return `${path}.lock`;
}

interface LockInfo {
  pid: number;
  owner?: string;
  startedAt?: string;
}

export function readLockInfo(path: string): LockInfo | null {
  try {
    const info = JSON.parse(readFileSync(lockFilePath(path), 'utf8')) as Partial<LockInfo>;
    return typeof info.pid === 'number' ? (info as LockInfo) : null;
  } catch {
    return null;
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockedMessage(path: string, pid: number | null, owner?: string): string {
  const holder = pid === null ? 'another process' : `pid ${pid}${owner ? `, ${owner}` : ''}`;
  return `warehouse ${path} is in use by another grantflow run (${holder}); wait for it to finish or stop it, then retry`;
}

/** DuckDB's file lock held by a process that left no grantflow lock note: an analyst's shell or a BI tool. */
export function lockedByOtherMessage(path: string, pid: number | null): string {
  const holder = pid === null ? 'another process' : `process ${pid}`;
  return (
    `warehouse ${path} is held open by ${holder}, not a grantflow run (a duckdb shell or BI tool?); ` +
    'close it, then retry. To read while syncs run, read the Parquet snapshots or a copy of the file'
  );
}

export interface InstanceSettings {
  /** DuckDB `memory_limit`: past it, DuckDB spills to `<file>.tmp/` (or fails with its out-of-memory error). */
  readonly memoryLimit: string;
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
): Promise<{ path: string; instance: DuckDBInstance }> {
  const path = resolve(target);
  const shared = open.get(path);
  if (shared) {
    shared.refs += 1;
    return { path, instance: shared.instance };
  }
  // DuckDB's own messages for these name no setting and read like a crash ("IO Error: Could not read from file").
  if (isDirectory(path))
    throw new ConfigError(`DuckDB warehouse ${path} is a directory, not a file; choose another --warehouse`);
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (e) {
    throw new ConfigError(
      `cannot create the directory of DuckDB warehouse ${path} (${pathProblem(e, dirname(path))}); choose another --warehouse`,
      { cause: e },
    );
  }
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(path, {
      memory_limit: settings.memoryLimit,
      checkpoint_threshold: checkpointThreshold,
    });
  } catch (e) {
    const message = (e as Error).message;
    if (/Could not set lock on file/i.test(message)) {
      const info = readLockInfo(path);
      const holder = Number(/PID (\d+)/.exec(message)?.[1] ?? NaN);
      const known = Number.isNaN(holder) ? null : holder;
      // The note names a live grantflow run, and DuckDB names that process (or no process) as the holder.
      const grantflow = info !== null && pidAlive(info.pid) && (known === null || known === info.pid);
      throw new LockedError(grantflow ? lockedMessage(path, info.pid, info.owner) : lockedByOtherMessage(path, known));
    }
    throw new ConfigError(`cannot open DuckDB warehouse ${path}: ${message.split('\n')[0] ?? message}`);
  }
  open.set(path, { instance, refs: 1 });
  return { path, instance };
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
