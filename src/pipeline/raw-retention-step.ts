import type { Settings } from '../config/settings.ts';
import { pruneRawRuns } from '../extract/raw-retention.ts';
import type { Logger } from '../util/logger.ts';
import { isJsonObject } from '../util/json.ts';
import type { Warehouse } from '../warehouse/types.ts';

/** How many recent runs are checked for unfinished ones: more than raw folders are ever kept by default. */
const runsChecked = 1000;

/**
 * At the end of a successful sync (before its row says so; the run is spared as the current one): prunes raw pages beyond `keepRawRuns` runs, sparing every run of this warehouse a resume
 * could still continue (running, interrupted, paused, or failed and marked resumable) and the run that just ended.
 */
export async function pruneRawAfterSync(
  warehouse: Warehouse,
  settings: Pick<Settings, 'landRaw' | 'rawDir' | 'keepRawRuns'>,
  runId: string,
  logger: Logger,
): Promise<void> {
  if (!settings.landRaw) return;
  let runs;
  try {
    runs = await warehouse.listRuns(runsChecked);
  } catch (e) {
    // Pruning is housekeeping: it never fails the sync it follows.
    logger.warn({ err: (e as Error).message }, 'could not read the runs to prune raw pages; the next sync tries again');
    return;
  }
  const unfinished = new Set(
    runs
      .filter(
        (r) =>
          r.status === 'running' ||
          r.status === 'interrupted' ||
          r.status === 'paused' ||
          (r.status === 'failed' && isJsonObject(r.summary) && r.summary.resumable === true),
      )
      .map((r) => r.runId),
  );
  await pruneRawRuns({ rawDir: settings.rawDir, keep: settings.keepRawRuns, current: runId, unfinished, logger });
}
