import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DuckDBInstance, version, type DuckDBConnection } from '@duckdb/node-api';
import { ConfigError, LockedError } from '../../util/errors.ts';
import { isDirectory, pathProblem } from '../../util/path-problem.ts';
import { ident, literal } from '../values.ts';
import { lockedByOtherMessage, lockedMessage, noteOfHolder } from './lock.ts';

/**
 * DuckDB locks the file per process, so two instances on one file inside the same process would not see each
 * other's lock: instances are shared per path and reference-counted.
 */
const open = new Map<string, { instance: DuckDBInstance; refs: number; readOnly: boolean }>();

export interface InstanceSettings {
  /** DuckDB `memory_limit`: past it, DuckDB spills to `<file>.tmp/` (or fails with its out-of-memory error). */
  readonly memoryLimit: string;
  /** DuckDB `threads` (default DuckDB's: one per core). */
  readonly threads?: number;
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

/**
 * The name the warehouse file is attached under. Opened directly, DuckDB names a file's catalog after it
 * (`portfolio.duckdb` -> `portfolio`), and a catalog named like a schema makes `portfolio.applications` ambiguous
 * (a Binder Error): attached under a name no schema of grantflow's takes (`main`, `analytics`, `portfolio`,
 * `site_*`, `*_analytics`), the file may be called anything. Nothing stored names it: views name their tables by
 * schema, so a reader opening the file directly resolves them in its own catalog.
 */
export const warehouseCatalog = 'grantflow';

/** A connection to the instance, resolving unqualified names in the warehouse file (not the empty `memory`). */
export async function connectWarehouse(instance: DuckDBInstance): Promise<DuckDBConnection> {
  const connection = await instance.connect();
  try {
    await connection.run(`USE ${ident(warehouseCatalog)}`);
  } catch (e) {
    connection.closeSync();
    throw e;
  }
  return connection;
}

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
  let instance: DuckDBInstance | undefined;
  try {
    instance = await DuckDBInstance.create(':memory:', {
      memory_limit: settings.memoryLimit,
      checkpoint_threshold: checkpointThreshold,
      // A file opened directly spills here by default; attached, DuckDB would spill to `.tmp` in the working folder.
      temp_directory: `${path}.tmp`,
      ...(settings.threads !== undefined ? { threads: String(settings.threads) } : {}),
    });
    const connection = await instance.connect();
    try {
      await connection.run(`ATTACH ${literal(path)} AS ${ident(warehouseCatalog)}${readOnly ? ' (READ_ONLY)' : ''}`);
    } finally {
      connection.closeSync();
    }
  } catch (e) {
    instance?.closeSync();
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
