import type { Promotion } from '../normalize/promotions.ts';
import type { UnknownFields } from './unknown-fields.ts';
import type { Logger } from '../util/logger.ts';
import type { SiteClient } from '../source/types.ts';
import type { Warehouse } from '../warehouse/types.ts';
import type { StreamCatalog } from '../streams/catalog.ts';
import type { Mutex } from './mutex.ts';
import type { RawLanding } from './raw-landing.ts';
import type { Progress } from './progress.ts';
import type { SinkCounts } from './row-batcher.ts';
import type { ReportRefreshOptions, ReportRefreshOutcome } from './report-refresh-types.ts';

export interface ExtractOptions {
  /**
   * Streams read as `--full-refresh` asks: fan-out streams fetch every parent's children again (change markers
   * ignored), append-only logs are read whole. Only the streams of the run that asked, when a later sync resumes it.
   */
  readonly fullRefreshStreams: ReadonlySet<string>;
  /** Fan-out streams do a full refresh when the last one is older than this (child edits that do not touch the parent). */
  readonly fullRefreshAfterDays: number;
  /**
   * `rolling`: instead of every parent at once after `fullRefreshAfterDays`, each run reads again the children of the
   * 1/N of parents read longest ago (N = those days, runs taken as days), and of any parent unread for N days.
   * Default `all-at-once`.
   */
  readonly fullRefreshMode?: 'all-at-once' | 'rolling';
  /** IANA zone for timestamps the site sends without one. */
  readonly siteTimeZone: string;
  /** Parents whose children are fetched at once per fan-out stream (the throttle still paces them). */
  readonly fanOutConcurrency: number;
  /** A fan-out stream commits after this many parents or this many seconds, whichever comes first. */
  readonly checkpointParents: number;
  readonly checkpointSeconds: number;
  /** ... or once the pages it holds reach this many characters (default checkpointChars in fan-out-stream.ts). */
  readonly checkpointChars?: number;
  /** A stream reading longer stops its walks, commits what it read and fails (default walk-limits.ts). */
  readonly maxStreamMs?: number;
  /** `per_page` of every list walk (see page-size.ts); the client's own setting when absent. */
  readonly pageSize?: number;
  /** Generate these reports before the reports list is read (opt-in: it writes to the site). */
  readonly refreshReports?: ReportRefreshOptions;
}

export interface ExtractContext {
  /** The streams of the run, built once (streams/catalog.ts): their parents, mappings and tables. */
  readonly catalog: StreamCatalog;
  readonly client: SiteClient;
  readonly warehouse: Warehouse;
  readonly mutex: Mutex;
  readonly raw: RawLanding | null;
  readonly runId: string;
  /** Start of the run, ISO UTC: `_extracted_at` of every row it writes. */
  readonly extractedAt: string;
  /** True when this run continues a run that was killed: work committed under `runId` is not fetched again. */
  readonly resuming: boolean;
  readonly options: ExtractOptions;
  /**
   * Aborted with the error when a stream meets one that ends the run (credentials rejected for good): the other
   * streams then start no new request (the sync's client checks it), finish, and runExtract returns. Without it,
   * such an error rejects runExtract at once.
   */
  readonly stop?: AbortController;
  /**
   * Aborted (with a BudgetReachedError) when the sync's time budget runs out: no new unit of work starts (a top-level
   * list, a parent's children), units under way finish and are committed, and streams left unfinished end
   * `interrupted`. Unlike `stop`, requests of work under way still go out: a unit cut short is fetched again.
   */
  readonly budget?: AbortSignal;
  readonly logger: Logger;
  readonly progress: Progress;
  /** The run's drift catalog (see unknown-fields.ts); none: drift is not looked for. */
  readonly unknownFields?: UnknownFields;
  /** Columns of the `promote` setting, filled from each record (see normalize/promotions.ts). */
  readonly promotions?: readonly Promotion[];
}

/** `interrupted`: the run was stopped (a signal, or another stream's credentials rejected) before it ended. */
export type StreamStatus = 'ok' | 'skipped' | 'failed' | 'interrupted' | 'already_done';

export interface StreamInfo {
  stream: string;
  status: StreamStatus;
  reason?: string;
  pages: number;
  records: number;
  rows: number;
  quarantined: number;
  /** Source values that could not be typed: NULL in their column, kept in `_raw` (see coerce.ts). */
  untyped: number;
  /** Records that loaded without one of their lists (absent, null or of another shape): its rows were kept live. */
  silent?: number;
  /** Timestamps that arrived without a zone, read in the site time zone (`--site-time-zone`). */
  naiveTimestamps?: number;
  duplicates: number;
  /** The walk saw the whole list (deletions were inferred). */
  complete: boolean;
  /** An append-only stream stopped paging at records already held (by design, not a partial scan). */
  caughtUp?: boolean;
  /** Rows of the stream's own table soft-deleted: its records. */
  deleted: number;
  /** Rows of the stream's list tables (bridges, custom field values) soft-deleted, per table. */
  listsDeleted?: Record<string, number>;
  /** Rows of other streams' tables soft-deleted with their deleted parents (cascades), per table. */
  cascaded?: Record<string, number>;
  /** Fan-out only; `notFound`: parents that answered 404 where that means "none" (eligibility). */
  parents?: {
    total: number;
    fetched: number;
    unchanged: number;
    gone: number;
    notFound: number;
    idle?: number;
    /** Unchanged parents read again by the rolling refresh (fullRefreshMode `rolling`). */
    rolling?: number;
  };
  /** reports, with `refreshReports`: the report jobs this run created and what came of them. */
  reportJobs?: ReportRefreshOutcome;
  /** Downloads in a format grantflow does not read (not CSV): no rows, the file kept under the raw landing. */
  otherFormat?: number;
  fullRefresh?: boolean;
  /** Parent streams only: records loaded under an id beyond 2^53, whose children could not be requested. */
  parentsUnread?: number;
  countMismatch?: { reported: number; read: number };
  durationMs: number;
}

/** A parent record's id and change marker, handed from a parent stream to its fan-out streams. */
export interface ParentRef {
  readonly id: number;
  readonly marker: string | null;
}

/** Paginate options asking for the run's page size, when one was found. */
export function pageQuery(ctx: Pick<ExtractContext, 'options'>): { query?: { per_page: number } } {
  return ctx.options.pageSize === undefined ? {} : { query: { per_page: ctx.options.pageSize } };
}

export function emptyInfo(stream: string): StreamInfo {
  return {
    stream,
    status: 'ok',
    pages: 0,
    records: 0,
    rows: 0,
    quarantined: 0,
    untyped: 0,
    duplicates: 0,
    complete: false,
    deleted: 0,
    durationMs: 0,
  };
}

/** Adds what a sink normalised for one commit to its stream's info. */
export function addSinkCounts(info: StreamInfo, counts: SinkCounts): void {
  info.records += counts.records;
  info.rows += counts.rows;
  info.quarantined += counts.quarantined;
  info.untyped += counts.untyped;
  if (counts.silent > 0) info.silent = (info.silent ?? 0) + counts.silent;
  if (counts.naive > 0) info.naiveTimestamps = (info.naiveTimestamps ?? 0) + counts.naive;
}

/** State of a stream kept in `_grantflow_streams`, committed with its data. */
export interface StreamState {
  lastCompleteRunId?: string;
  lastCompleteAt?: string;
  lastFullRefreshAt?: string;
  /** Fan-out: a full refresh did not read every parent whole, so the next run refreshes again. */
  fullRefreshPending?: boolean;
  /**
   * Fan-out: when the full refresh under way began (the attempt's extraction time). A resumed run skips only the
   * parents it read since then: those it read before (a plain attempt, killed) may have had children edited since.
   */
  fullRefreshSince?: string;
  /** applications: the page size lists are read with, and how it was found (see page-size.ts). */
  pageSize?: number;
  pageSizeFound?: string;
  /**
   * Top-level: where a walk cut short by the time budget or the stream's time limit stopped (the next page's URL): the
   * next walk starts there. Cleared when a walk reaches the list's end.
   */
  resumeUrl?: string;
  /** append_newest_first streams: the highest id held. */
  maxId?: number;
  records?: number;
}
