/** Exit codes are part of the CLI contract (DESIGN.md): 0 success, 1 run failed, 2 bad usage or configuration. */
export const ExitCode = { ok: 0, runFailed: 1, usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * Base of every error grantflow expects and can explain. The CLI prints `message` on one line, without a
 * stack, and exits with `exitCode`. Messages must never carry a secret (see util/redact.ts).
 */
export class GrantflowError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.runFailed,
    readonly code: string = 'run_failed',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad flag, environment variable, pipeline file or credentials file: nothing is written. */
export class ConfigError extends GrantflowError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ExitCode.usage, 'config', options);
  }
}

/** Credentials the site rejects for good (invalid_grant, invalid_client): a person must regenerate them. */
export class CredentialsError extends GrantflowError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ExitCode.usage, 'credentials', options);
  }
}

/** Another process holds the warehouse lock. */
export class LockedError extends GrantflowError {
  constructor(message: string) {
    super(message, ExitCode.runFailed, 'locked');
  }
}

/**
 * A sync told to stop (SIGINT/SIGTERM, or credentials rejected mid-run): no new request starts, commits under way
 * finish (one waiting for another session's Postgres lock rolls back instead), and the run is recorded so the next
 * sync resumes it. Exit 1: the run did not complete.
 */
export class StoppedError extends GrantflowError {
  constructor(message: string) {
    super(message, ExitCode.runFailed, 'stopped');
  }
}

/** Why `signal` was aborted, as a GrantflowError (a StoppedError unless the reason is one already). */
export function stopReason(signal: AbortSignal): GrantflowError {
  const reason: unknown = signal.reason;
  if (reason instanceof GrantflowError) return reason;
  return new StoppedError(reason instanceof Error ? reason.message : 'interrupted');
}

/** Between steps of work a stop abandons (models, a snapshot): throws the stop's reason once `signal` is aborted. */
export function throwIfStopped(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw stopReason(signal);
}

/** The first line of an error's message (of its text for a non-Error), for one-line reports and summaries. */
export function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
}

export function isGrantflowError(e: unknown): e is GrantflowError {
  return e instanceof GrantflowError;
}
