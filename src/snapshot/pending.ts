import { manifestName, parseManifest } from './manifest.ts';
import { snapshotName } from './retention.ts';
import { tempSuffix } from './snapshot-dir.ts';
import { filePath, type Pending, type SnapshotStore } from './snapshot-store.ts';

export type { Pending };

/**
 * The snapshot a write is about to publish, noted before its first file and removed once the manifest names it (or
 * the write undid itself). A kill between the first file and the manifest would otherwise leave `snapshot=` folders
 * (objects) no manifest ever named: readers globbing the folders would take a partial set, and retention would count
 * them as kept snapshots and remove the last published one, which a reader of the manifest may still be using.
 */
export const pendingName = `.snapshot-pending${tempSuffix}`;

const tableNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The note's snapshot, or null when it is cut short or of another shape (a kill while it was written). */
export function parsePending(text: string): Pending | null {
  try {
    const p = JSON.parse(text) as Partial<Pending>;
    const valid =
      typeof p.folder === 'string' &&
      snapshotName.test(p.folder) &&
      Array.isArray(p.tables) &&
      p.tables.every((t) => typeof t === 'string' && tableNamePattern.test(t));
    return valid ? { folder: p.folder as string, tables: p.tables as string[] } : null;
  } catch {
    return null;
  }
}

/**
 * Undoes the snapshot a killed write left pending, under the location's writer lock: its temporaries, and its
 * `snapshot=` folders unless the manifest already names them (the kill came after the manifest: the snapshot was
 * published, and its tables' latest files are placed, the kill may have come before them); then the note. Run before
 * a write chooses its folder. Returns what was removed.
 */
export async function undoPendingSnapshot(store: SnapshotStore): Promise<string[]> {
  const text = await store.readText(pendingName);
  if (text === null) return [];
  const pending = parsePending(text);
  const removed: string[] = [];
  if (pending !== null) {
    const manifest = parseManifest(await store.readText(manifestName));
    for (const table of pending.tables) {
      const path = filePath(table, pending.folder);
      const published = manifest?.tables[table]?.path === path;
      // Killed after the manifest named it, maybe before its latest file was placed: placed now (again).
      if (published && (await store.exists(path))) await store.placeLatest(table, path);
      removed.push(...(await store.discard(table, pending.folder, published)));
    }
    await store.abortPartialUploads();
  }
  await store.clearPending();
  return removed;
}
