import { StoppedError, stopReason, type GrantflowError } from '../util/errors.ts';

/**
 * What stops a sync: the caller (a signal, aborting `caller`) or a stream meeting credentials rejected for good
 * (aborting `controller`). No new request starts once it is aborted; see SyncRequest.signal for the rest.
 */
export class SyncStop {
  readonly controller = new AbortController();
  private readonly fromCaller = (): void => this.controller.abort(this.caller?.reason);

  constructor(private readonly caller: AbortSignal | undefined) {
    if (caller?.aborted) this.fromCaller();
    caller?.addEventListener('abort', this.fromCaller, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get stopped(): boolean {
    return this.controller.signal.aborted;
  }

  /** Why it stopped (never a secret: see stopReason). */
  get reason(): GrantflowError {
    return stopReason(this.controller.signal);
  }

  /** Stopped by the caller (a signal): an interruption. A stream's error that stopped the run is a failure. */
  get interrupted(): boolean {
    return this.caller?.aborted === true && this.controller.signal.reason === this.caller.reason;
  }

  /** Before the run is recorded, a stop is just the error that stopped it: nothing needs resuming yet. */
  errorOf(error: unknown): unknown {
    return this.stopped && error instanceof StoppedError ? this.reason : error;
  }

  throwIfStopped(): void {
    if (this.stopped) throw this.reason;
  }

  /** The sync is over: the caller's signal no longer reaches it. */
  dispose(): void {
    this.caller?.removeEventListener('abort', this.fromCaller);
  }
}
