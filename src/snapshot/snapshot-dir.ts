import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../util/errors.ts';

/**
 * Pre-flight: the sync calls this before it writes anything, so an unwritable snapshot directory is a
 * configuration error (exit 2) reported up front instead of a failure after a long extract.
 */
export function checkSnapshotDir(dir: string): void {
  const path = resolve(dir);
  try {
    mkdirSync(path, { recursive: true });
    const probe = join(path, `.grantflow-write-probe-${process.pid}.tmp`);
    writeFileSync(probe, 'ok');
    rmSync(probe, { force: true });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why =
      err.code === 'EACCES' || err.code === 'EPERM'
        ? 'permission denied'
        : err.code === 'ENOTDIR' || err.code === 'EEXIST'
          ? 'a file is in the way of the directory'
          : err.code === 'EROFS'
            ? 'read-only file system'
            : (err.message.split('\n')[0] ?? 'unknown error');
    throw new ConfigError(
      `snapshot directory ${path} is not writable (${why}); choose another one with --snapshots or fix its permissions`,
      { cause: e },
    );
  }
}

/** `2026-11-21T23-59-59Z`: a UTC timestamp safe in file names (no colons) that sorts in time order. */
export function snapshotStamp(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace(/:/g, '-')}Z`;
}

/** Snapshot folders sort by name in time order; a second snapshot within the same second gets a suffix. */
export function snapshotFolder(stamp: string, attempt: number): string {
  return attempt === 0 ? `snapshot=${stamp}` : `snapshot=${stamp}-${String(attempt).padStart(3, '0')}`;
}

/** Temporary files never end in `.parquet` or `.json`, so a reader globbing for those never sees a partial file. */
export const tempSuffix = '.tmp';
