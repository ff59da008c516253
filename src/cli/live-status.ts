import { formatLiveProgress, readLiveProgress } from '../pipeline/live-progress-file.ts';
import { LockedError } from '../util/errors.ts';

/**
 * `status` on a DuckDB warehouse a sync holds: prints the progress that run publishes (and returns null) instead of
 * failing; any other error, or a holder that published nothing, is thrown as it was.
 */
export function liveStatusOr(error: unknown, warehouse: string): null {
  const live = error instanceof LockedError ? readLiveProgress(warehouse) : null;
  if (!live) throw error;
  process.stdout.write(formatLiveProgress(warehouse, live, process.stdout.columns ?? 100).join('\n') + '\n');
  return null;
}
