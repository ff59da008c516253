import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { manifestName } from './manifest.ts';
import { tempSuffix } from './snapshot-dir.ts';

function entries(dir: string): import('node:fs').Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Names grantflow gives what it writes (see snapshotFolder, writeSnapshots, writeManifest): the snapshot directory
 * may be shared (a folder BI tools also use), so retention removes nothing else, however it is named.
 */
const stampPattern = String.raw`\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ(?:-\d{3,})?`;
export const snapshotName = new RegExp(`^snapshot=${stampPattern}$`);
const hiddenFolderName = new RegExp(`^\\.snapshot=${stampPattern}${escape(tempSuffix)}$`);
const manifestTempName = new RegExp(`^\\.${escape(manifestName)}\\.\\d+${escape(tempSuffix)}$`);
const tableTempName = (table: string): RegExp => new RegExp(`^\\.${escape(table)}\\..+${escape(tempSuffix)}$`);

/**
 * Keeps the newest `retain` snapshot folders of a table (folder names sort in time order) and removes older
 * ones plus stray temporary files left by an interrupted write. `current`, the folder just written (which the
 * manifest names), is always one of those kept, even when the clock went back and its name sorts first.
 * Returns the removed paths.
 */
export function applyRetention(dir: string, table: string, retain: number, current?: string): string[] {
  const tableDir = join(dir, table);
  const removed: string[] = [];
  const all = entries(tableDir);
  const snapshots = all
    .filter((e) => e.isDirectory() && snapshotName.test(e.name) && e.name !== current)
    .map((e) => e.name)
    .sort();
  const keptOthers = all.some((e) => e.name === current) ? retain - 1 : retain;
  for (const name of snapshots.slice(0, Math.max(0, snapshots.length - keptOthers))) {
    rmSync(join(tableDir, name), { recursive: true, force: true });
    removed.push(join(tableDir, name));
  }
  // Temporary files and folders of a write that was interrupted (see writeSnapshots).
  const tableTemp = tableTempName(table);
  for (const e of all) {
    if ((e.isFile() && tableTemp.test(e.name)) || (e.isDirectory() && hiddenFolderName.test(e.name))) {
      rmSync(join(tableDir, e.name), { recursive: true, force: true });
      removed.push(join(tableDir, e.name));
    }
  }
  return removed;
}

/** Stray temporary manifests in the snapshot directory itself. */
export function removeStrayManifestTemps(dir: string): string[] {
  const removed: string[] = [];
  for (const e of entries(dir)) {
    if (e.isFile() && manifestTempName.test(e.name)) {
      rmSync(join(dir, e.name), { force: true });
      removed.push(join(dir, e.name));
    }
  }
  return removed;
}
