import { durationMs, formatDuration } from '../config/duration.ts';
import { StoppedError } from '../util/errors.ts';

/** Why a sync stopped taking work: its `--max-duration` ran out. Not a failure: the run ends `paused`. */
export class BudgetReachedError extends StoppedError {
  constructor(readonly budgetMs: number) {
    super(`time budget of ${formatDuration(budgetMs)} reached`);
  }
}

/**
 * A sync's time budget (`--max-duration`), counted from the sync's start. Once it runs out `signal` is aborted and the
 * extraction starts no new unit of work (a top-level list, a parent's children); units under way finish and are
 * committed, because each is committed whole and one cut short would be fetched again by the next run. So the run
 * ends within one unit of the budget with nothing it fetched wasted, and the next sync continues it.
 */
export class TimeBudget {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly budgetMs: number | null,
    started: number,
  ) {
    if (budgetMs === null) return;
    const left = Math.max(0, started + budgetMs - Date.now());
    // Unref'd: a budget never keeps the process alive after the sync.
    this.timer = setTimeout(() => this.controller.abort(new BudgetReachedError(budgetMs)), left).unref();
  }

  /** The budget a `maxDuration` setting gives (none without one), running from `started` (Date.now()). */
  static of(maxDuration: string | undefined, started: number): TimeBudget {
    return new TimeBudget(maxDuration === undefined ? null : durationMs(maxDuration), started);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get reached(): boolean {
    return this.controller.signal.aborted;
  }

  /** The extraction is over: what follows (models, data tests, snapshots) is not cut by the budget. */
  dispose(): void {
    clearTimeout(this.timer);
  }
}
