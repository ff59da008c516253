import { readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, LockedError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import { pathProblem } from '../../util/path-problem.ts';
import { pidAlive } from '../../util/process-alive.ts';
import {
  holderGone,
  keepRenewed,
  markHeld,
  markReleased,
  parseHolder,
  thisHolder,
  type NoteHolder,
} from '../../util/lock-note.ts';
import { testPause } from '../../util/test-pause.ts';
import { checkWritableDir } from '../../util/writable-dir.ts';

/**
 * The run lock of a DuckDB warehouse. DuckDB's own file lock keeps other processes out while the file is open (a
 * writer's open excludes everyone, a reader's excludes writers); grantflow adds a note beside the file naming the
 * holder, so a run DuckDB refuses can say which run holds it (see acquireInstance).
 */

function lockFilePath(path: string): string {
  return `${path}.lock`;
}

/**
 * A read-only opener's note, one per process: any number of readers share the file, and DuckDB names any one of them
 * to a writer it refuses, so each reader must be findable by its pid (one shared note names only one of them).
 */
function readerNotePath(path: string, pid: number): string {
  return `${lockFilePath(path)}.${pid}`;
}

export interface LockInfo extends NoteHolder {
  readonly owner?: string;
  readonly startedAt?: string;
}

/** The note of the process holding the DuckDB file at `path` to write, if it left one. */
export function readLockInfo(path: string): LockInfo | null {
  return readNote(lockFilePath(path));
}

function readNote(file: string): LockInfo | null {
  try {
    return parseHolder<LockInfo>(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Whether the note at `file` names a holder that is still there, by the one rule of util/lock-note.ts. */
function liveHolder(info: LockInfo, file: string): boolean {
  let renewedAt: number | undefined;
  try {
    renewedAt = statSync(file).mtimeMs;
  } catch {
    renewedAt = undefined;
  }
  return !holderGone(info, file, renewedAt);
}

/**
 * The live grantflow run holding the file, if the process DuckDB names (`known`; null when it names none) left a
 * note: the writer's (or an older version's reader's) `.lock`, or a reader's own note.
 */
function grantflowHolder(path: string, known: number | null): LockInfo | null {
  const files = [lockFilePath(path), ...(known === null ? [] : [readerNotePath(path, known)])];
  for (const file of files) {
    const n = readNote(file);
    if (n !== null && liveHolder(n, file) && (known === null || known === n.pid)) return n;
  }
  return null;
}

export function lockedMessage(path: string, pid: number | null, owner?: string): string {
  const holder = pid === null ? 'another process' : `pid ${pid}${owner ? `, ${owner}` : ''}`;
  return `warehouse ${path} is in use by another grantflow run (${holder}); wait for it to finish or stop it, then retry`;
}

/**
 * DuckDB's file lock held by a process that left no grantflow lock note: an analyst's shell or a BI tool. A reader
 * (`readOnly`) is refused only by a process that writes, which could open the file read-only instead.
 */
export function lockedByOtherMessage(path: string, pid: number | null, readOnly = false): string {
  const holder = pid === null ? 'another process' : `process ${pid}`;
  if (readOnly)
    return (
      `warehouse ${path} is held open for writing by ${holder}, not a grantflow run (a duckdb shell or BI tool?); ` +
      'close it, or have it open the file read-only (duckdb -readonly), then retry'
    );
  return (
    `warehouse ${path} is held open by ${holder}, not a grantflow run (a duckdb shell or BI tool?); ` +
    'close it, then retry. To read while syncs run, read the Parquet snapshots or a copy of the file'
  );
}

/**
 * A grantflow run opens the file before it writes its note (migrations come between), so a run refused in that window
 * would blame "not a grantflow run (a duckdb shell?)". While the holder may be a grantflow run (a Node process, or
 * one `/proc` cannot tell about), its note is waited for briefly; a refusal costs that wait, a success nothing.
 */
const noteWaitMs = 3_000;

export async function noteOfHolder(path: string, known: number | null): Promise<LockInfo | null> {
  const until = Date.now() + noteWaitMs;
  for (;;) {
    const info = grantflowHolder(path, known);
    if (info || Date.now() >= until || !mayBeGrantflow(known)) return info;
    await sleep(50);
  }
}

function mayBeGrantflow(pid: number | null): boolean {
  if (pid === null) return true;
  if (!pidAlive(pid)) return false;
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return /node|grantflow/i.test(basename(argv0));
  } catch {
    return true;
  }
}

/**
 * Run locks this process holds, per file and schema (DuckDB's own file lock does not separate callers in one
 * process): a portfolio's sites sync into schemas of one file at once, each under its own lock.
 */
const heldLocks = new Set<string>();
const lockKey = (path: string, schema: string): string => `${path}\0${schema}`;
/** Notes this process wrote, by how many of its run locks need them: a portfolio's sites share the file's note. */
const notesInUse = new Map<string, number>();
/** How to stop renewing each note this process holds. */
const renewing = new Map<string, () => void>();

/** The run lock of one open warehouse: the note it wrote, removed on release. */
export class RunLock {
  private held = false;
  /** The note this warehouse wrote, to remove on release: the writer's `.lock`, or a reader's own. */
  private note: string | null = null;

  constructor(
    private readonly path: string,
    private readonly readOnly: boolean,
    private readonly logger: Logger,
    private readonly schema = 'main',
  ) {}

  private get key(): string {
    return lockKey(this.path, this.schema);
  }

  get taken(): boolean {
    return this.held;
  }

  /** DuckDB lets one process open the file at a time: only this process can hold the lock while it has it open. */
  static heldHere(path: string, schema = 'main'): boolean {
    return heldLocks.has(lockKey(path, schema));
  }

  async take(owner: string): Promise<void> {
    if (heldLocks.has(this.key)) {
      const info = readLockInfo(this.path);
      throw new LockedError(lockedMessage(this.path, process.pid, info?.owner));
    }
    await testPause('duckdb lock note'); // the file is open, its note not yet written: see noteOfHolder
    if (this.readOnly) return this.takeAsReader(owner);
    const note = lockFilePath(this.path);
    if ((notesInUse.get(note) ?? 0) > 0) {
      // Another schema of this file is locked by this process: its note names this process already.
      this.hold(note);
      return;
    }
    const info = readLockInfo(this.path);
    if (info && info.pid !== process.pid && liveHolder(info, note) && existsSync(note)) {
      // DuckDB let us open the file, so the recorded holder no longer has it open: the lock file is stale.
      this.logger.warn({ pid: info.pid }, 'ignoring a stale warehouse lock file');
    }
    this.removeReaderNotes();
    // DuckDB creates its .wal next to the file at the first commit: a folder the user may not write (made read-only
    // with the file, say) is a configuration problem said before anything is written, not a commit failing mid-run.
    checkWritableDir(
      dirname(this.path),
      'warehouse folder',
      "a writer needs it for DuckDB's .wal file and the lock note; fix its permissions or choose another --warehouse",
    );
    try {
      writeNote(note, owner);
    } catch (e) {
      throw new ConfigError(`warehouse lock note ${note} cannot be written (${pathProblem(e, note)})`, { cause: e });
    }
    this.hold(note);
  }

  private hold(note: string | null): void {
    heldLocks.add(this.key);
    this.held = true;
    this.note = note;
    if (note === null) return;
    const users = notesInUse.get(note) ?? 0;
    notesInUse.set(note, users + 1);
    if (users > 0) return;
    markHeld(note);
    // The lease a process on another host (a shared network folder) judges the note by: see util/lock-note.ts.
    const stop = keepRenewed(() => {
      const now = new Date();
      utimesSync(note, now, now);
    });
    renewing.set(note, stop);
  }

  /**
   * Opened read-only, the file is shared with other readers only: DuckDB keeps every writer (a sync, `models run`)
   * out while it is open, which is the run lock. The note only names this process to a writer DuckDB refuses, so
   * each reader writes its own (`<file>.lock.<pid>`), and a folder it cannot be written in (an analyst reading a
   * warehouse they may not write) does not stop a command that only reads.
   */
  private takeAsReader(owner: string): void {
    const note = readerNotePath(this.path, process.pid);
    if ((notesInUse.get(note) ?? 0) > 0) return this.hold(note);
    try {
      writeNote(note, owner);
      this.hold(note);
    } catch (e) {
      this.logger.debug({ err: e }, 'could not write the lock note of a read-only warehouse; going on without it');
      this.hold(null);
    }
  }

  /** A writer has the file to itself: readers' notes left behind are of readers killed before they could remove them. */
  private removeReaderNotes(): void {
    const prefix = `${basename(lockFilePath(this.path))}.`;
    try {
      for (const name of readdirSync(dirname(this.path))) {
        if (name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
          rmSync(join(dirname(this.path), name), { force: true });
      }
    } catch (e) {
      this.logger.debug({ err: e }, 'could not remove stale reader lock notes; going on without');
    }
  }

  release(): void {
    if (this.held) heldLocks.delete(this.key);
    const note = this.note;
    this.held = false;
    this.note = null;
    if (note === null) return;
    const users = (notesInUse.get(note) ?? 1) - 1;
    if (users > 0) {
      notesInUse.set(note, users);
      return;
    }
    notesInUse.delete(note);
    renewing.get(note)?.();
    renewing.delete(note);
    markReleased(note);
    try {
      rmSync(note, { force: true });
    } catch (e) {
      // A folder made unwritable meanwhile: the note of a process that is gone is ignored by the next one; failing
      // here would leave DuckDB open and hide the error the run is reporting.
      this.logger.warn({ err: e, note }, 'could not remove the warehouse lock note');
    }
  }
}

function writeNote(file: string, owner: string): void {
  writeFileSync(file, JSON.stringify({ ...thisHolder(), owner, startedAt: new Date().toISOString() }));
}
