import { checkWritableDir } from '../util/writable-dir.ts';

/**
 * Pre-flight: the sync calls this before it writes anything, so an unwritable snapshot directory is a
 * configuration error (exit 2) reported up front instead of a failure after a long extract.
 */
export function checkSnapshotDir(dir: string): void {
  checkWritableDir(dir, 'snapshot directory', 'choose another one with --snapshots or fix its permissions');
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

/** The hidden folder a table's file waits in until every table of the snapshot is written. */
export function hiddenFolder(folder: string): string {
  return `.${folder}${tempSuffix}`;
}

/** The temporary name a table's Parquet file is written under. */
export function tempFile(table: string, folder: string): string {
  return `.${table}.${folder.slice('snapshot='.length)}${tempSuffix}`;
}
