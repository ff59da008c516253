import type { JsonObject, JsonValue } from '../util/json.ts';
import type { AuthGate } from './http.ts';

/**
 * What the site client asks of its credentials (credentials/token-manager.ts implements it): the access token to
 * send, and a new one after a 401, its rotated pair saved before any further request starts.
 */
export interface SiteAuth extends AuthGate {
  /** The current access token is past its early-refresh point: it may have expired by now. */
  readonly dueForRefresh: boolean;
  /** Where the credentials live, for messages (never the secrets themselves). */
  readonly description: string;
  /** Replaces `staleToken` unless it was replaced already; concurrent callers share one refresh. */
  refresh(staleToken: string): Promise<void>;
}

/** How the site client lets its auth refresh: the token request goes through its limiter and retries. */
export interface TokenExchange {
  /** Sends the refresh form to the token endpoint and returns the parsed body. */
  send(form: URLSearchParams): Promise<{ body: JsonValue; url: string }>;
  /** Counts a refresh the site answered (the client's `stats.refreshes`). */
  refreshed(): void;
}

export type QueryParams = Readonly<Record<string, string | number | boolean | undefined>>;

export interface FetchedPage {
  /** The absolute URL that was requested (tokens never appear in it). */
  readonly url: string;
  readonly status: number;
  readonly fetchedAt: string;
  /** Records of this page, after de-duplication against earlier pages of the same walk. */
  readonly records: readonly JsonObject[];
  /** Records of this page already seen earlier in the walk (left out of `records`). */
  readonly repeated: number;
  /** The body exactly as received, for raw landing. */
  readonly body: string;
  readonly next: string | null;
  /** `count` (or a similar total) when the envelope carries one. */
  readonly total: number | null;
  /** True when the body was an envelope `{results, next, ...}`; false for a bare array. */
  readonly envelope: boolean;
}

export type StopReason =
  | 'end'
  | 'empty_page'
  | 'repeated_next'
  | 'no_progress'
  | 'page_cap'
  | 'count_cap'
  | 'full_bare_array'
  | 'short_of_count'
  | 'page_gone';

export interface PaginationInfo {
  readonly pages: number;
  readonly records: number;
  readonly duplicates: number;
  readonly totalReported: number | null;
  /** True only when the walk certainly saw the whole list (a deletion scan may rely on it). */
  readonly complete: boolean;
  readonly stopReason: StopReason;
  /**
   * True when the envelope's `count` disagreed with the records read (also logged as a warning). Fewer records than
   * the count makes the walk incomplete: records shifted past the walk by a deletion on a page already read.
   */
  readonly countMismatch?: boolean;
}

export interface PaginateOptions {
  readonly query?: QueryParams;
  /** Key of a record, for de-duplication of records that reappear when data shifts between pages. */
  readonly keyOf?: (record: JsonObject) => string;
  readonly maxPages?: number;
}

export interface ClientStats {
  requests: number;
  /** Responses by HTTP status; `network`: attempts that got no answer (reset, timeout). */
  byStatus: Record<string, number>;
  retries: number;
  rateLimited: number;
  refreshes: number;
  bytes: number;
}

export interface SiteClient {
  readonly baseUrl: string;
  readonly stats: ClientStats;
  /** Every page of a list endpoint; the generator's return value summarises the walk. */
  paginate(path: string, options?: PaginateOptions): AsyncGenerator<FetchedPage, PaginationInfo>;
  /** One GET whose body is JSON (detail endpoints, eligibility, doctor). */
  getJson(path: string, query?: QueryParams): Promise<{ status: number; body: JsonValue; raw: string; url: string }>;
  /**
   * One POST of a JSON body whose answer is JSON (a report job, the one write a sync may make, when asked). Retried
   * as a GET is: a repeated job only generates the report again.
   */
  postJson(path: string, body: JsonValue): Promise<{ status: number; body: JsonValue; raw: string; url: string }>;
  /** One GET of a file (a report download): its bytes as received, whatever the format; an HTML page is refused. */
  download(path: string): Promise<DownloadedFile & { status: number; url: string; fetchedAt: string }>;
  close(): Promise<void>;
}

export interface DownloadedFile {
  /** Not redacted (a binary file cannot be): text read from it is redacted by its reader. */
  readonly bytes: Buffer;
  /** The Content-Type header as sent, or null. */
  readonly contentType: string | null;
}
