import { hostname } from 'node:os';
import { processStart } from './process-start.ts';
import { pidAlive } from './process-alive.ts';

/**
 * A lock note names the process holding a lock (the snapshot writer lock of a folder or a bucket, a DuckDB
 * warehouse's run lock) so that another process can tell a live holder from one a kill left behind. Every lock
 * judges its note by the one rule here, `holderGone`.
 */
export interface NoteHolder {
  readonly pid: number;
  /** Absent from notes written before hosts were recorded: taken as this machine. */
  readonly host?: string;
  /** processStart of the holder: absent from older notes and where `/proc` does not say. */
  readonly started?: string;
}

/**
 * A holder on another host (a scheduled job's pod or runner, which gets a new host name each run) cannot be checked
 * by its pid, so it renews its note every `heartbeatMs`; one not renewed for `leaseMs` is a killed holder's. The lease
 * is long against the heartbeat, for a busy event loop and clocks that differ between hosts.
 */
export const heartbeatMs = 10_000;
export const leaseMs = 120_000;

/** This process, as its notes name it. */
export function thisHolder(): { readonly pid: number; readonly host: string; readonly started?: string } {
  return { pid: process.pid, host: hostname(), started: processStart(process.pid) };
}

/** The note's holder fields, or null when the text names no pid (unreadable, cut short). */
export function parseHolder<T extends object>(text: string): (T & NoteHolder) | null {
  try {
    const { started, host, ...rest } = JSON.parse(text) as Partial<NoteHolder> & T;
    if (typeof rest.pid !== 'number') return null;
    // A field of another shape is ignored: the checks that remain then decide, as for notes older than it.
    return {
      ...(rest as T & { pid: number }),
      ...(typeof host === 'string' ? { host } : {}),
      ...(typeof started === 'string' ? { started } : {}),
    };
  } catch {
    return null;
  }
}

/** Notes this process holds now, by their path or key: a note naming this pid but not among them is an earlier run's. */
const heldHere = new Set<string>();

export function markHeld(note: string): void {
  heldHere.add(note);
}

export function markReleased(note: string): void {
  heldHere.delete(note);
}

export const isOnThisHost = (h: NoteHolder): boolean => h.host === undefined || h.host === hostname();

/**
 * The one staleness rule. Gone when the holder ran on this machine and its pid is gone, or now names a process that
 * started at another time (the pid reused, maybe after a reboot), or is this process's pid while this process does
 * not hold `note` (a container's run gets the same pid, often 1, each time, so a killed run's note would name a live
 * pid, ours, for good); or when it ran on another host and its lease ran out (`renewedAt`: when the note was last
 * renewed, in ms; undefined when it never was, which no live holder on another host leaves).
 */
export function holderGone(h: NoteHolder, note: string, renewedAt: number | undefined): boolean {
  if (!isOnThisHost(h)) return renewedAt === undefined || Date.now() - renewedAt > leaseMs;
  if (h.pid === process.pid) return !heldHere.has(note);
  if (!pidAlive(h.pid)) return true;
  const now = h.started === undefined ? undefined : processStart(h.pid);
  return now !== undefined && now !== h.started;
}

/** Renews a held note every heartbeat (see leaseMs) until the returned function stops it; never keeps Node alive. */
export function keepRenewed(renew: () => unknown): () => void {
  const timer = setInterval(() => {
    try {
      void Promise.resolve(renew()).catch(() => undefined);
    } catch {
      // gone (released meanwhile) or not ours to renew: the next beat, or release, settles it
    }
  }, heartbeatMs);
  timer.unref();
  return () => clearInterval(timer);
}
