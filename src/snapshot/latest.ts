import { copyFileSync, existsSync, linkSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncFile, mkdirDurable, renameDurable } from '../util/durable-file.ts';
import { tempSuffix } from './snapshot-dir.ts';

/**
 * `latest/<table>.parquet`: one file per table holding exactly its newest published snapshot, so a reader (or a BI
 * tool) can point at `latest/*.parquet` and count each row once, where a glob over the `snapshot=` folders counts it
 * once per kept snapshot. Each file is replaced whole (a temporary renamed over it) only after the manifest names the
 * snapshot it holds, so a reader sees the previous file or the new one, never a half or none.
 */
export const latestFolder = 'latest';

/** Relative to the snapshot directory (or the store's prefix), with `/` separators, as the manifest names it. */
export const latestPath = (table: string): string => `${latestFolder}/${table}.parquet`;

/** Never ends in `.parquet`, and starts with `.`: a glob over `latest/*.parquet` never sees it. */
const latestTemp = (table: string): string => `.${table}.parquet.${process.pid}${tempSuffix}`;
const latestTempName = /^\..+\.parquet\.\d+\.tmp$/;

/**
 * Points `latest/<table>.parquet` at the published file `source` (relative to `dir`): a hard link (no second copy on
 * the disk, and retention removing the old folder cannot take it away), or a copy where the file system has no hard
 * links; then renamed over the old one, durably.
 */
export function placeLatest(dir: string, table: string, source: string): void {
  const folder = join(dir, latestFolder);
  mkdirDurable(folder);
  const temp = join(folder, latestTemp(table));
  rmSync(temp, { force: true });
  try {
    linkSync(join(dir, source), temp);
  } catch {
    copyFileSync(join(dir, source), temp);
  }
  try {
    fsyncFile(temp);
    renameDurable(temp, join(folder, `${table}.parquet`));
  } finally {
    rmSync(temp, { force: true });
  }
}

export function hasLatest(dir: string, table: string): boolean {
  return existsSync(join(dir, latestPath(table)));
}

/** Temporaries a killed write left in `latest/` (a reader's glob skips them; this tidies them away). */
export function removeStrayLatestTemps(dir: string): string[] {
  const folder = join(dir, latestFolder);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  return names
    .filter((n) => latestTempName.test(n))
    .map((n) => {
      rmSync(join(folder, n), { force: true });
      return join(folder, n);
    });
}
