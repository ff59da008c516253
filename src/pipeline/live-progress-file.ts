import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { describeOverall, progressView, type ProgressSnapshot } from '../extract/progress-view.ts';
import { pidAlive } from '../util/process-alive.ts';
import { duckdbLockHolder } from '../warehouse/index.ts';

/**
 * A DuckDB sync holds its file for the whole run, so `status` cannot open it; the run publishes its progress beside
 * the warehouse instead (`<warehouse>.progress.json`, replaced atomically about once a second) and `status` shows
 * that. Not durable on purpose: it describes a live process and is removed when that process exits.
 */

export interface LiveProgress {
  readonly pid: number;
  readonly runId: string;
  readonly snapshot: ProgressSnapshot;
}

export function liveProgressPath(warehouse: string): string {
  return `${warehouse}.progress.json`;
}

/** Files to remove when the process exits: one listener for every sync a process runs (a test runs many). */
const published = new Set<string>();

function removeOnExit(path: string): void {
  if (published.size === 0) {
    process.once('exit', () => {
      for (const file of published) {
        try {
          unlinkSync(file);
        } catch {
          // Already gone, or never written.
        }
      }
    });
  }
  published.add(path);
}

/** A publisher for Progress: writes the file (temp + rename, so a reader never sees half of it). */
export function liveProgressPublisher(warehouse: string, runId: string): (snapshot: ProgressSnapshot) => void {
  const path = liveProgressPath(warehouse);
  const temp = `${path}.${process.pid}.tmp`;
  let failed = false;
  removeOnExit(path);
  return (snapshot) => {
    if (failed) return;
    try {
      writeFileSync(temp, JSON.stringify({ pid: process.pid, runId, snapshot } satisfies LiveProgress));
      renameSync(temp, path);
    } catch {
      // Best-effort: a folder that refuses the file costs `status` its live view, never the sync.
      failed = true;
    }
  };
}

/** The progress the run holding the warehouse published, if that run is alive and is the lock note's holder. */
export function readLiveProgress(warehouse: string): LiveProgress | null {
  let live: LiveProgress;
  try {
    live = JSON.parse(readFileSync(liveProgressPath(warehouse), 'utf8')) as LiveProgress;
  } catch {
    return null;
  }
  if (typeof live.pid !== 'number' || typeof live.runId !== 'string' || typeof live.snapshot !== 'object') return null;
  if (!pidAlive(live.pid) || duckdbLockHolder(warehouse)?.pid !== live.pid) return null;
  return live;
}

/** What `status` prints for a warehouse a sync holds: the holder (its pid, once) and its progress. */
export function formatLiveProgress(warehouse: string, live: LiveProgress, columns = 100): string[] {
  const snap = live.snapshot;
  const lines = [
    `warehouse ${warehouse} is held by a running sync (pid ${live.pid}, run ${live.runId}, started ${snap.startedAt});`,
    'its tables cannot be read until it ends. Its progress as of ' + snap.at + ':',
    '',
  ];
  if (snap.finished) {
    lines.push(`  extraction ${describeOverall(snap)}; models, data tests and snapshots may be under way`);
    return lines;
  }
  return [...lines, ...progressView(snap, columns, Math.max(snap.streams.length + 2, 3))];
}
