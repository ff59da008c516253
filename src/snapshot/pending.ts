import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readManifest } from './manifest.ts';
import { hiddenFolder, tempFile, tempSuffix } from './snapshot-dir.ts';
import { createFileDurable, removeDurable } from '../util/durable-file.ts';
import { placeLatest } from './latest.ts';

/**
 * The snapshot a write is about to publish, noted before its first file and removed once the manifest names it (or
 * the write undid itself). A kill between the folders' renames and the manifest would otherwise leave `snapshot=`
 * folders no manifest ever named: readers globbing the folders would take a partial set, and retention would count
 * them as kept snapshots and remove the last published one, which a reader of the manifest may still be using.
 */
export const pendingName = `.snapshot-pending${tempSuffix}`;

interface Pending {
  readonly folder: string;
  readonly tables: readonly string[];
}

/**
 * Written first, before any file of the snapshot, and on the disk before it returns: a note cut short by a kill or a
 * crash means nothing was staged yet, and a folder renamed into place later cannot outlive a crash without it.
 */
export function notePending(dir: string, pending: Pending): void {
  createFileDurable(join(dir, pendingName), JSON.stringify(pending));
}

/** Whether a write noted a snapshot it has not yet published or undone (a killed one, or one under way). */
export function pendingNoted(dir: string): boolean {
  return existsSync(join(dir, pendingName));
}

export function clearPending(dir: string): void {
  rmSync(join(dir, pendingName), { force: true });
}

function readPending(dir: string): Pending | 'none' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(join(dir, pendingName), 'utf8');
  } catch {
    return 'none';
  }
  try {
    const parsed = JSON.parse(text) as Partial<Pending>;
    const valid =
      typeof parsed.folder === 'string' &&
      parsed.folder.startsWith('snapshot=') &&
      Array.isArray(parsed.tables) &&
      parsed.tables.every((t) => typeof t === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(t));
    return valid ? (parsed as Pending) : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/**
 * Undoes the snapshot a killed write left pending: its temporaries, and its `snapshot=` folders unless the manifest
 * already names them (the kill came after the manifest's rename: the snapshot was published, and its tables' latest
 * files are placed, the kill may have come before them). Run before a write
 * chooses its folder. Returns the removed paths.
 */
export function undoPendingSnapshot(dir: string): string[] {
  const pending = readPending(dir);
  if (pending === 'none') return [];
  const removed: string[] = [];
  if (pending !== 'unreadable') {
    const manifest = readManifest(dir);
    for (const table of pending.tables) {
      const tableDir = join(dir, table);
      const published = manifest?.tables[table]?.path === `${table}/${pending.folder}/${table}.parquet`;
      const leftovers = [tempFile(table, pending.folder), hiddenFolder(pending.folder)];
      if (!published) leftovers.push(pending.folder);
      // Killed after the manifest named it, maybe before its latest file was placed: placed now (again).
      else if (existsSync(join(tableDir, pending.folder, `${table}.parquet`))) {
        placeLatest(dir, table, `${table}/${pending.folder}/${table}.parquet`);
      }
      for (const name of leftovers) {
        const path = join(tableDir, name);
        if (!existsSync(path)) continue;
        // Gone for good before the note is: a crash must not bring back a folder without the note naming it.
        removeDurable(path);
        removed.push(path);
      }
    }
  }
  clearPending(dir);
  return removed;
}
