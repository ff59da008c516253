import { manifestName } from './manifest.ts';
import { tempSuffix } from './snapshot-dir.ts';
import type { SnapshotStore } from './snapshot-store.ts';

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Names grantflow gives what it writes (see snapshotFolder, hiddenFolder, tempFile, writeManifest): the snapshot
 * location may be shared (a folder BI tools also use), so retention removes nothing else, however it is named.
 */
const stampPattern = String.raw`\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ(?:-\d{3,})?`;
export const snapshotName = new RegExp(`^snapshot=${stampPattern}$`);
export const hiddenFolderName = new RegExp(`^\\.snapshot=${stampPattern}${escape(tempSuffix)}$`);
export const manifestTempName = new RegExp(`^\\.${escape(manifestName)}\\.\\d+${escape(tempSuffix)}$`);
export const tableTempName = (table: string): RegExp => new RegExp(`^\\.${escape(table)}\\..+${escape(tempSuffix)}$`);

/**
 * Keeps the newest `retain` snapshot folders of a table (folder names sort in time order) and removes older ones,
 * then the table's temporaries of interrupted writes. `current`, the folder just written (which the manifest names),
 * is always one of those kept, even when the clock went back and its name sorts first. Returns what was removed.
 */
export async function applyRetention(
  store: SnapshotStore,
  table: string,
  retain: number,
  current: string,
): Promise<string[]> {
  const all = await store.folders(table);
  const others = all.filter((f) => f !== current).sort();
  const keptOthers = all.includes(current) ? retain - 1 : retain;
  const removed: string[] = [];
  for (const folder of others.slice(0, Math.max(0, others.length - keptOthers))) {
    removed.push(...(await store.removeFolder(table, folder)));
  }
  removed.push(...(await store.tidyTable(table)));
  return removed;
}
