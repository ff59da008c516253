import { linkSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { LockedError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { processStart } from '../util/process-start.ts';
import { pidAlive } from '../util/process-alive.ts';

/**
 * One snapshot writer per directory. The warehouse's run lock does not give that: `grantflow snapshot` opens a DuckDB
 * file read-only (so two can run on one file), and writers of different warehouses (a Postgres schema each, another
 * DuckDB file) may share a snapshot directory. Two writers at once share the pending note, retention and the manifest:
 * the second's start removed the first's renamed folders as a killed write's leftovers, and the first's manifest then
 * named files that were gone. Not named like a snapshot or a temporary, so retention and readers' globs skip it.
 */
export const writerLockName = '.snapshot-writer.lock';

interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly command: string;
  readonly since: string;
  /** processStart of the holder: absent from older notes and where `/proc` does not say. */
  readonly started?: string;
}

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
  try {
    const { started, ...h } = JSON.parse(text) as Partial<Holder>;
    if (typeof h.pid !== 'number' || typeof h.host !== 'string') return 'unreadable';
    // A start of another shape is ignored: the pid check alone then decides, as for notes older than it.
    return typeof started === 'string' ? ({ ...h, started } as Holder) : (h as Holder);
  } catch {
    return 'unreadable';
  }
}

/** Lock files this process holds now: a note naming this pid but not among them is an earlier process's. */
const heldHere = new Set<string>();

/**
 * A holder on another host (a scheduled job's pod or runner, which gets a new host name each run) cannot be checked
 * by its pid, so it keeps its lock alive by touching it every `heartbeatMs`; one untouched for `leaseMs` is a killed
 * writer's. The lease is long against the heartbeat, for a busy event loop and clocks that differ between hosts.
 */
export const heartbeatMs = 10_000;
export const leaseMs = 120_000;

/**
 * Dead when it ran on this machine and its pid is gone, or now names a process that started at another time
 * (the pid reused, maybe after a reboot), or is this process's pid while this process does not hold it (a container's
 * run gets the same pid, often 1, each time, so a killed run's lock would name a live pid, ours, for good); or when
 * it ran on another host and its lease ran out.
 */
const stale = (h: Holder, path: string): boolean => {
  if (h.host !== hostname()) return leaseExpired(path);
  if (h.pid === process.pid) return !heldHere.has(path);
  if (!pidAlive(h.pid)) return true;
  const now = h.started === undefined ? undefined : processStart(h.pid);
  return now !== undefined && now !== h.started;
};

function leaseExpired(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > leaseMs;
  } catch {
    return false; // gone meanwhile: the next round looks again
  }
}

function describe(h: Holder | 'unreadable'): string {
  if (h === 'unreadable') return 'another process';
  const where = h.host === hostname() ? '' : ` on ${h.host}`;
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
  const mine: Holder = {
    pid: process.pid,
    host: hostname(),
    command,
    since: new Date().toISOString(),
    started: processStart(process.pid),
  };
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
    `snapshot directory ${dir} is being written by another grantflow process (${describe(holder)}); nothing was ` +
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
      logger.warn(
        { holderPid: dead.pid, holderHost: dead.host, command: dead.command, since: dead.since },
        dead.host === hostname()
          ? 'taking over a stale snapshot writer lock: its process is gone (a write killed before it finished; its pid may now be another process)'
          : `taking over a stale snapshot writer lock of host ${dead.host}: not renewed for ${leaseMs / 1000} s (a write killed before it finished)`,
      );
      rmSync(path, { force: true });
    }
  } finally {
    rmSync(guard, { force: true });
  }
}

function held(path: string): WriterLock {
  heldHere.add(path);
  // The lease a writer on another host judges this lock by (see leaseMs); a failed touch is retried next beat.
  const heartbeat = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // gone (released meanwhile) or not ours to touch: the next beat, or release, settles it
    }
  }, heartbeatMs);
  heartbeat.unref();
  const release = (): void => {
    clearInterval(heartbeat);
    process.off('exit', release);
    heldHere.delete(path);
    const h = readHolder(path);
    // Only our own: never a lock another writer took over after ours was (wrongly) judged stale.
    if (h !== 'none' && h !== 'unreadable' && h.pid === process.pid && h.host === hostname()) {
      rmSync(path, { force: true });
    }
  };
  process.on('exit', release);
  return { release };
}
