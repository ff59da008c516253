import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  holderGone,
  keepRenewed,
  markHeld,
  markReleased,
  parseHolder,
  thisHolder,
  type NoteHolder,
} from '../../util/lock-note.ts';
import type { RefreshMark } from '../types.ts';

/**
 * Refresh marks (see RefreshMark) of a DuckDB warehouse that may not exist yet (a first run's refresh comes before the
 * file is created): a note of each mark beside the file, `<file>.refresh.<pid>-<n>`, so marks never contend; a note
 * whose holder is gone (killed mid-refresh), by util/lock-note.ts's rule, is not waited for, and is removed.
 */
const prefixOf = (path: string): string => `${basename(path)}.refresh.`;

/** Numbers this process's marks: two refreshes of one process (two site clients) have a note each. */
let marks = 0;

export function markDuckDBRefresh(path: string): RefreshMark {
  const dir = dirname(path);
  const note = join(dir, `${prefixOf(path)}${process.pid}-${++marks}`);
  const created = writeNote(dir, note);
  markHeld(note);
  const stopRenewing = keepRenewed(() => {
    const now = new Date();
    utimesSync(note, now, now);
  });
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    stopRenewing();
    markReleased(note);
    rmSync(note, { force: true });
    removeEmptyDirs(dir, created);
  };
  return {
    async waitForOthers() {
      release();
      while (otherLiveMarks(path).length > 0) await sleep(50);
    },
    release: () => Promise.resolve(release()),
  };
}

/**
 * Writes the note, creating the warehouse's folder when a first run's is not there yet (its check created none);
 * returns the outermost folder it created. Another mark's release may remove an empty folder between the two steps:
 * then both are done again.
 */
function writeNote(dir: string, note: string): string | undefined {
  let created: string | undefined;
  for (let attempt = 0; ; attempt++) {
    let outermost: string | undefined;
    for (let d = dir; !existsSync(d) && dirname(d) !== d; d = dirname(d)) outermost = d;
    created ??= outermost;
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(note, `${JSON.stringify(thisHolder())}\n`);
      return created;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 10) throw e;
    }
  }
}

/** The folders a mark created, innermost first, while empty: a failed first run leaves nothing behind. */
function removeEmptyDirs(dir: string, created: string | undefined): void {
  for (let d = dir; created !== undefined && d.length >= created.length; d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return; // not empty (the warehouse, another mark), or gone
    }
  }
}

/** The notes of other processes' live marks on `path`. */
function otherLiveMarks(path: string): string[] {
  const dir = dirname(path);
  const prefix = prefixOf(path);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(prefix) && /^\d+-\d+$/.test(n.slice(prefix.length)));
  } catch {
    return [];
  }
  return names
    .map((n) => join(dir, n))
    .filter((file) => {
      if (live(file)) return true;
      // A killed refresh's note: nothing else removes it.
      rmSync(file, { force: true });
      return false;
    });
}

function live(file: string): boolean {
  let text: string;
  let renewedAt: number;
  try {
    text = readFileSync(file, 'utf8');
    renewedAt = statSync(file).mtimeMs;
  } catch {
    return false; // released meanwhile (removing it again is harmless)
  }
  const holder = parseHolder<NoteHolder>(text);
  // A note cut short was being written (its holder is there) unless it is older than a lease.
  if (holder === null) return Date.now() - renewedAt < 120_000;
  return !holderGone(holder, file, renewedAt);
}
