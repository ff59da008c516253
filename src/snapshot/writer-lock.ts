import { linkSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { LockedError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { pidAlive } from '../util/process-alive.ts';
import {
  holderGone,
  isOnThisHost,
  keepRenewed,
  leaseMs,
  markHeld,
  markReleased,
  parseHolder,
  thisHolder,
  type NoteHolder,
} from '../util/lock-note.ts';

/**
 * One snapshot writer per directory. The warehouse's run lock does not give that: `grantflow snapshot` opens a DuckDB
 * file read-only (so two can run on one file), and writers of different warehouses (a Postgres schema each, another
 * DuckDB file) may share a snapshot directory. Two writers at once share the pending note, retention and the manifest:
 * the second's start removed the first's renamed folders as a killed write's leftovers, and the first's manifest then
 * named files that were gone. Not named like a snapshot or a temporary, so retention and readers' globs skip it.
 */
export const writerLockName = '.snapshot-writer.lock';

/** The lock's note (see util/lock-note.ts), also read by a bucket's writer lock (bucket-lock.ts). */
export interface WriterHolder extends NoteHolder {
  readonly command: string;
  readonly since: string;
}
type Holder = WriterHolder;

export interface WriterLock {
  release(): void;
}

function readHolder(path: string): Holder | 'none' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return 'none';
  }
  const h = parseHolder<Holder>(text);
  return h === null || typeof h.host !== 'string' ? 'unreadable' : h;
}

/** When the note was last renewed (its holder touches it): the lease of a holder on another host. */
function renewedAt(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined; // gone meanwhile: the next round looks again
  }
}

const stale = (h: Holder, path: string): boolean => holderGone(h, path, renewedAt(path) ?? Date.now());

export function describeWriter(h: Holder | 'unreadable'): string {
  if (h === 'unreadable') return 'another process';
  const where = isOnThisHost(h) ? '' : ` on ${h.host}`;
  return `pid ${h.pid}${where}: ${h.command || 'grantflow'}, since ${h.since}`;
}

/** Written whole under a name of our own, then linked into place: `link` fails if the name exists, like O_EXCL. */
function linkNote(temp: string, to: string): boolean {
  try {
    linkSync(temp, to);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

/**
 * Takes the directory's writer lock for `command`, or throws LockedError (exit 1) naming the live holder: at once, not
 * after a wait, since a waiting `grantflow snapshot` would keep its DuckDB file open (and so a sync out), and a
 * scheduler retries at its next slot anyway; nothing is written or removed before the lock is held. A lock whose
 * process is gone (killed) is taken over, with a log line. Released by `release()`, and on `process.exit`.
 */
export function takeWriterLock(dir: string, command: string, logger: Logger): WriterLock {
  const path = join(dir, writerLockName);
  const mine: Holder = { ...thisHolder(), command, since: new Date().toISOString() };
  const temp = join(dir, `${writerLockName}.${process.pid}`);
  writeFileSync(temp, `${JSON.stringify(mine)}\n`);
  try {
    // A few rounds: a holder may finish, or a stale lock be taken over by another writer, between two looks.
    for (let round = 0; round < 5; round++) {
      if (linkNote(temp, path)) {
        removeKilledTemps(dir);
        return held(path);
      }
      const holder = readHolder(path);
      if (holder === 'none') continue;
      if (holder === 'unreadable' || !stale(holder, path)) throw busy(dir, path, holder);
      takeOver(path, temp, holder, logger);
    }
    const last = readHolder(path);
    throw busy(dir, path, last === 'none' ? 'unreadable' : last);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** A temporary this old was not between its write and its link: its writer is gone (killed in that instant). */
const tempGraceMs = 60_000;

/**
 * Removes lock temporaries (`.snapshot-writer.lock.<pid>`) of writers killed between writing one and linking it, which
 * no later step would remove: only once this process holds the lock, and only a minute old with their pid gone, so a
 * writer on another host sharing the folder is not robbed of the one it is about to link.
 */
function removeKilledTemps(dir: string): void {
  const pattern = new RegExp(`^${writerLockName.replace(/\./g, '\\.')}\\.(\\d+)$`);
  try {
    for (const name of readdirSync(dir)) {
      const pid = Number(pattern.exec(name)?.[1] ?? NaN);
      if (Number.isNaN(pid) || pid === process.pid || pidAlive(pid)) continue;
      const file = join(dir, name);
      if (Date.now() - statSync(file).mtimeMs >= tempGraceMs) rmSync(file, { force: true });
    }
  } catch {
    // Tidying only: a folder that cannot be listed now is listed again by the next write.
  }
}

function busy(dir: string, path: string, holder: Holder | 'unreadable'): LockedError {
  return new LockedError(
    `snapshot directory ${dir} is being written by another grantflow process (${describeWriter(holder)}); nothing was ` +
      `written or removed: retry once it has finished (if no such process runs, remove ${path})`,
  );
}

/**
 * Removes a dead writer's lock. Two writers may find the same stale lock: only the one that creates the takeover note
 * removes it, and only if it is still that dead writer's, so neither removes the lock the other has just taken.
 */
function takeOver(path: string, temp: string, dead: Holder, logger: Logger): void {
  const guard = `${path}.takeover`;
  if (!linkNote(temp, guard)) {
    const other = readHolder(guard);
    // A writer killed mid-takeover left its note: it goes, and the next round tries again.
    if (other !== 'none' && other !== 'unreadable' && stale(other, guard)) rmSync(guard, { force: true });
    return;
  }
  try {
    const now = readHolder(path);
    if (now !== 'none' && now !== 'unreadable' && now.pid === dead.pid && now.since === dead.since) {
      warnTakeOver(logger, dead);
      rmSync(path, { force: true });
    }
  } finally {
    rmSync(guard, { force: true });
  }
}

/** Said when a dead writer's lock is taken over, whether a folder's or a bucket's. */
export function warnTakeOver(logger: Logger, dead: Holder): void {
  logger.warn(
    { holderPid: dead.pid, holderHost: dead.host, command: dead.command, since: dead.since },
    isOnThisHost(dead)
      ? 'taking over a stale snapshot writer lock: its process is gone (a write killed before it finished; its pid may now be another process)'
      : `taking over a stale snapshot writer lock of host ${dead.host}: not renewed for ${leaseMs / 1000} s (a write killed before it finished)`,
  );
}

function held(path: string): WriterLock {
  markHeld(path);
  // The lease a writer on another host judges this lock by (see leaseMs).
  const stop = keepRenewed(() => {
    const now = new Date();
    utimesSync(path, now, now);
  });
  const release = (): void => {
    stop();
    process.off('exit', release);
    markReleased(path);
    const h = readHolder(path);
    // Only our own: never a lock another writer took over after ours was (wrongly) judged stale.
    if (h !== 'none' && h !== 'unreadable' && h.pid === process.pid && h.host === hostname()) {
      rmSync(path, { force: true });
    }
  };
  process.on('exit', release);
  return { release };
}
