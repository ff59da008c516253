import type { StreamInfo } from '../extract/types.ts';
import type { ClientStats } from '../source/types.ts';
import type { RunRecord, Warehouse } from '../warehouse/types.ts';
import { CredentialsError, ExitCode, firstLine, GrantflowError } from '../util/errors.ts';
import { isJsonObject, type JsonValue } from '../util/json.ts';
import type { Logger } from '../util/logger.ts';
import { redact } from '../util/redact.ts';
import type { AfterLoadInfo } from './after-load.ts';
import type { DriftSummary } from './drift-catalog.ts';
import { newRunId } from './run-id.ts';
import type { SyncStop } from './sync-stop.ts';

export interface SyncResult {
  readonly runId: string;
  readonly status: 'succeeded' | 'partial' | 'failed' | 'interrupted' | 'paused';
  readonly resumed: boolean;
  readonly streams: readonly StreamInfo[];
  readonly client: ClientStats;
  readonly after: AfterLoadInfo | null;
  readonly durationMs: number;
  readonly exitCode: number;
  /** Schema drift the run saw (none when it could not be recorded). */
  readonly drift?: DriftSummary;
  /** The zone timestamps without one were read in (`--site-time-zone`). */
  readonly siteTimeZone: string;
}

/**
 * A sync that stopped before it finished (a signal, or credentials rejected mid-run): its run is recorded (failed or
 * interrupted, resumable), `result` reports the streams it committed, and the error's code is the exit code.
 */
export class SyncStoppedError extends GrantflowError {
  constructor(
    message: string,
    exitCode: ExitCode,
    readonly result: SyncResult,
  ) {
    super(message, exitCode, 'stopped');
  }
}

/** What a run was asked to do that a resume must do too; kept in its `_grantflow_runs` row (summary.options). */
interface RunOptions {
  readonly fullRefresh: boolean;
  /** The streams the full refresh covers: those the run selected. */
  readonly fullRefreshStreams?: readonly string[];
}

/** What a run has done by its end: the streams' reports and the client's counters. */
export interface RunWork {
  readonly streams: StreamInfo[];
  readonly client: ClientStats;
  readonly drift?: DriftSummary;
}

/**
 * The record of one sync run in `_grantflow_runs`: started (or resumed) as `running`, then ended once, as it
 * succeeded, partly failed, or stopped. A run that was killed or stopped is continued under its own id.
 */
export class SyncRun {
  private constructor(
    private readonly warehouse: Warehouse,
    private readonly site: string,
    readonly runId: string,
    private readonly startedAt: string,
    /** Date.now() when the sync started (its duration counts from there, also when resumed). */
    private readonly started: number,
    readonly resumed: boolean,
    private readonly options: RunOptions,
    private readonly siteTimeZone: string,
  ) {}

  /** The streams this run reads whole (a --full-refresh, its own or the resumed run's). */
  get fullRefreshStreams(): ReadonlySet<string> {
    return new Set(this.options.fullRefreshStreams);
  }

  /**
   * Starts a run, or resumes `last` when it did not finish, and records it as `running`. A resumed run keeps the
   * intent it started with: a --full-refresh killed halfway and resumed by a plain sync must still read every parent's
   * children, or child edits only a full refresh sees are missed; but only for the streams that run selected (a record
   * from before the selection was kept: the streams of this sync).
   */
  static async begin(
    warehouse: Warehouse,
    last: RunRecord | undefined,
    request: {
      readonly site: string;
      readonly started: number;
      readonly fullRefresh: boolean;
      readonly streams: readonly string[];
      readonly siteTimeZone: string;
      readonly logger: Logger;
    },
  ): Promise<SyncRun> {
    const { site, started, streams, logger } = request;
    const resumed = last !== undefined && resumable(last);
    const runId = resumed && last ? last.runId : newRunId();
    const startedAt = resumed && last ? last.startedAt : new Date(started).toISOString();
    const stored = resumed ? runOptionsOf(last?.summary) : {};
    const fullRefreshStreams = new Set([
      ...(request.fullRefresh ? streams : []),
      ...(stored.fullRefresh ? (stored.fullRefreshStreams ?? streams) : []),
    ]);
    const fullRefresh = fullRefreshStreams.size > 0;
    const options = { fullRefresh, fullRefreshStreams: [...fullRefreshStreams] } satisfies RunOptions;
    if (resumed && last?.status === 'paused') logger.info({ runId, fullRefresh }, 'continuing the paused run');
    else if (resumed) logger.warn({ runId, fullRefresh }, 'the previous run did not finish: resuming it');
    await warehouse.saveRun({ runId, startedAt, status: 'running', summary: { site, options } });
    return new SyncRun(warehouse, site, runId, startedAt, started, resumed, options, request.siteTimeZone);
  }

  /** Records how the run ended (succeeded, or partial: a stream, model, data test or snapshot failed). */
  async finish(
    status: 'succeeded' | 'partial',
    work: RunWork,
    after: AfterLoadInfo,
    exitCode: ExitCode,
  ): Promise<SyncResult> {
    const result = this.result(status, work, after, exitCode);
    await this.record(result, work, { after: after.summary });
    return result;
  }

  /**
   * Out of time (--max-duration): what was fetched is committed and the run is recorded `paused`, to be continued by
   * the next sync. Not a failure (exit 0), but no model, data test or snapshot is built from a half-read site.
   */
  async paused(work: RunWork, reason: string): Promise<SyncResult> {
    const result = this.result('paused', work, null, ExitCode.ok);
    await this.record(result, work, { paused: reason, resumable: true });
    return result;
  }

  /**
   * Stopped: what was committed stays, the run is recorded with why (never a secret), and the next sync resumes it.
   * Credentials rejected for good are a configuration problem (exit 2: a person must issue new ones). Only the
   * caller's stop (a signal) is an interruption; a stream's error that ended the run is a failure. A record that
   * cannot be written (a lock held past its short wait after a stop) is said, and the run still ends as stopped.
   */
  async stopped(stop: SyncStop, work: RunWork, after: AfterLoadInfo | null): Promise<never> {
    const reason = stop.reason;
    const error = redact(reason.message);
    const exitCode = reason instanceof CredentialsError ? ExitCode.usage : ExitCode.runFailed;
    const status = stop.interrupted ? 'interrupted' : 'failed';
    const result = this.result(status, work, after, exitCode);
    let unrecorded = '';
    try {
      await this.record(result, work, { error, resumable: true, ...(after ? { after: after.summary } : {}) });
    } catch (e) {
      if (!(e instanceof GrantflowError)) throw e;
      // Its row still says `running` (status reports it as killed), which the next sync resumes all the same.
      unrecorded = `; the run could not be recorded as ${status}, so its record says running until then (${firstLine(e)})`;
    }
    throw new SyncStoppedError(
      `${error}; the streams committed before are kept and the next sync resumes run ${this.runId}${unrecorded}`,
      exitCode,
      result,
    );
  }

  private result(
    status: SyncResult['status'],
    work: RunWork,
    after: AfterLoadInfo | null,
    exitCode: ExitCode,
  ): SyncResult {
    return {
      runId: this.runId,
      status,
      resumed: this.resumed,
      streams: work.streams,
      client: { ...work.client },
      after,
      durationMs: Date.now() - this.started,
      exitCode,
      ...(work.drift ? { drift: work.drift } : {}),
      siteTimeZone: this.siteTimeZone,
    };
  }

  private record(result: SyncResult, work: RunWork, extra: Record<string, unknown>): Promise<void> {
    const { site, options, siteTimeZone } = this;
    const summary = {
      site,
      streams: work.streams,
      client: work.client,
      durationMs: result.durationMs,
      options,
      ...(work.drift ? { drift: work.drift } : {}),
      siteTimeZone,
    };
    return this.warehouse.saveRun({
      runId: this.runId,
      startedAt: this.startedAt,
      finishedAt: new Date().toISOString(),
      status: result.status,
      summary: JSON.parse(JSON.stringify({ ...summary, ...extra })) as JsonValue,
    });
  }
}

/**
 * A run to continue rather than start afresh: one that died (still `running`), one stopped by a signal or by its time
 * budget (`paused`), or one
 * stopped by credentials rejected mid-run (`failed`, marked resumable): their committed work is not fetched again.
 */
function resumable(run: RunRecord): boolean {
  if (run.status === 'running' || run.status === 'interrupted' || run.status === 'paused') return true;
  return run.status === 'failed' && isJsonObject(run.summary) && run.summary.resumable === true;
}

function runOptionsOf(summary: JsonValue | undefined): Partial<RunOptions> {
  const options = isJsonObject(summary) ? summary.options : undefined;
  if (!isJsonObject(options) || typeof options.fullRefresh !== 'boolean') return {};
  const names = options.fullRefreshStreams;
  const fullRefreshStreams =
    Array.isArray(names) && names.every((n) => typeof n === 'string') ? (names as string[]) : undefined;
  return { fullRefresh: options.fullRefresh, ...(fullRefreshStreams ? { fullRefreshStreams } : {}) };
}
