import { formatDuration } from '../config/duration.ts';
import { GrantflowError, stopReason } from '../util/errors.ts';
import type { ExtractContext } from './types.ts';

/** A stream's own time limit when none is set (`--max-stream-duration`): see settings. */
export const defaultMaxStreamMs = 6 * 3_600_000;

/**
 * Why a list walk under way stops before its end: the run's time budget (`--max-duration`: the run pauses), or the
 * stream's own time limit (`--max-stream-duration`: the stream fails). Either way what was read is committed.
 */
export type WalkCut = 'budget' | 'stream_time_limit';

export function walkCut(ctx: Pick<ExtractContext, 'budget' | 'options'>, started: number): WalkCut | null {
  if (ctx.budget?.aborted) return 'budget';
  if (Date.now() - started >= (ctx.options.maxStreamMs ?? defaultMaxStreamMs)) return 'stream_time_limit';
  return null;
}

/** A stream that ran past its own time limit: it fails (the run exits 1), keeping what it committed. */
export class StreamTimeLimitError extends GrantflowError {
  constructor(limitMs: number, continues: string) {
    super(`stopped at its time limit of ${formatDuration(limitMs)} (--max-stream-duration); ${continues}`);
  }
}

/** The error a cut stream ends with: the budget's reason (interrupted, the run pauses), or its time limit's. */
export function cutError(ctx: Pick<ExtractContext, 'budget' | 'options'>, cut: WalkCut, continues: string): Error {
  return cut === 'budget' && ctx.budget
    ? stopReason(ctx.budget)
    : new StreamTimeLimitError(ctx.options.maxStreamMs ?? defaultMaxStreamMs, continues);
}
