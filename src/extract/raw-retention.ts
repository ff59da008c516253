import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../util/logger.ts';

/** The folder names of runs (run-id.ts): nothing else under the raw dir is ever removed. */
const runFolder = /^\d{8}T\d{6}Z-[0-9a-f]{4}$/;

/**
 * Removes the raw pages of older runs, keeping the newest `keep` run folders (run ids sort by their start), the current
 * run's, and those of `unfinished` runs (a resume lands more parts in its folder and a replay of it needs them all).
 * Best-effort, after a successful sync: a folder that cannot be removed is said in a warning and tried again next run.
 * Returns the run ids removed.
 */
export async function pruneRawRuns(options: {
  readonly rawDir: string;
  readonly keep: number;
  readonly current: string;
  readonly unfinished: ReadonlySet<string>;
  readonly logger: Logger;
}): Promise<string[]> {
  const { rawDir, keep, current, unfinished, logger } = options;
  let names: string[];
  try {
    const entries = await readdir(rawDir, { withFileTypes: true });
    names = entries.filter((e) => e.isDirectory() && runFolder.test(e.name)).map((e) => e.name);
  } catch (e) {
    logger.warn(
      { rawDir, err: (e as Error).message },
      'could not list old raw pages to prune; the next sync tries again',
    );
    return [];
  }
  const older = names.sort().reverse().slice(keep);
  const removed: string[] = [];
  for (const runId of older) {
    if (runId === current || unfinished.has(runId)) continue;
    try {
      await rm(join(rawDir, runId), { recursive: true, force: true });
      removed.push(runId);
    } catch (e) {
      logger.warn({ runId, err: (e as Error).message }, 'could not remove the raw pages of an old run');
    }
  }
  if (removed.length > 0) logger.info({ removed, kept: keep }, 'removed raw pages of older runs');
  return removed;
}
