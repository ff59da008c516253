import { isJsonObject, type JsonValue } from '../util/json.ts';

/**
 * Why a run did not succeed (or is paused), in one line, from the summary its `_grantflow_runs` row keeps: the error that stopped
 * it, the streams that failed, a model, the data tests or the snapshots. Null when the summary names nothing (a run
 * that succeeded, one still running, or one a killed process left behind).
 */
export function runReason(summary: JsonValue | undefined): string | null {
  if (!isJsonObject(summary)) return null;
  const parts: string[] = [];
  if (typeof summary.error === 'string') parts.push(summary.error);
  // A run its time budget paused (sync-run.ts): why it is not finished yet.
  if (typeof summary.paused === 'string') parts.push(summary.paused);
  const streams = Array.isArray(summary.streams) ? summary.streams.filter(isJsonObject) : [];
  const failed = streams.filter((s) => s.status === 'failed');
  if (failed.length > 0) {
    const first = failed[0]!;
    const why = typeof first.reason === 'string' ? `: ${first.reason}` : '';
    parts.push(`stream${failed.length > 1 ? 's' : ''} failed: ${failed.map((s) => String(s.stream)).join(', ')}${why}`);
  }
  const after = isJsonObject(summary.after) ? summary.after : {};
  if (typeof after.modelError === 'string') parts.push(`models failed: ${after.modelError}`);
  const tests = isJsonObject(after.tests) ? after.tests : {};
  const errors = Array.isArray(tests.errors) ? tests.errors.map(String) : [];
  if (errors.length > 0) parts.push(`data tests failed: ${errors.join(', ')}`);
  if (typeof after.snapshotError === 'string') parts.push(`snapshots failed: ${after.snapshotError}`);
  return parts.length > 0 ? parts.join('; ') : null;
}
