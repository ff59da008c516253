import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive } from '../util/process-alive.ts';

/**
 * The local folder an upload to an object store writes each table's Parquet file into before putting it. Its name
 * carries the process id, so that a later upload can tell the folder of a killed one (its process gone) from the
 * folder of one still running, and remove it: a large table's file would otherwise stay in the temporary directory.
 */
const prefix = 'grantflow-snapshot-';
const owned = new RegExp(`^${prefix}(\\d+)-`);

export function makeUploadStaging(root = tmpdir()): string {
  return mkdtempSync(join(root, `${prefix}${process.pid}-`));
}

/**
 * Removes the staging folders in `root` whose process is gone; returns their names. A folder of a live process (this
 * one, another upload, or an unrelated process that got a dead one's pid) is kept, as is one this user cannot remove.
 */
export function removeAbandonedStaging(root = tmpdir()): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = Number(owned.exec(name)?.[1] ?? NaN);
    if (!Number.isSafeInteger(pid) || pid === process.pid || pidAlive(pid)) continue;
    try {
      rmSync(join(root, name), { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Another user's folder, or one being removed by someone else: not ours to insist on.
    }
  }
  return removed;
}
