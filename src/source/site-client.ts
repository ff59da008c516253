import { setMaxListeners } from 'node:events';
import { isLoopbackHost, notLoopbackCode } from '../util/loopback-host.ts';
import type { Logger } from '../util/logger.ts';
import { silentLogger } from '../util/logger.ts';
import { ConfigError, CredentialsError, GrantflowError } from '../util/errors.ts';
import { redact } from '../util/redact.ts';
import { isJsonObject, type JsonValue } from '../util/json.ts';
import { oneLine, SiteHttpError, SiteResponseError, SiteUnavailableError } from './errors.ts';
import { HttpTransport, type HttpRequest, type HttpResponse } from './http.ts';
import { parseJson, parseListPage, walkPages, type ParseResult } from './pagination.ts';
import { backoffMs, describeNetworkError, retryAfterMs, sleep, stoppedRequest, tlsError } from './retry.ts';
import type {
  ClientStats,
  DownloadedFile,
  FetchedPage,
  PaginateOptions,
  PaginationInfo,
  QueryParams,
  SiteAuth,
  SiteClient,
  TokenExchange,
} from './types.ts';

export interface HttpSiteClientOptions {
  readonly baseUrl: string;
  /** Requests per second (default 5). */
  readonly rate?: number;
  /** Requests in flight at once (default 8). */
  readonly concurrency?: number;
  readonly perPage?: number;
  /** Retries of network errors, 5xx and garbage bodies (default 6). */
  readonly maxRetries?: number;
  readonly timeoutMs?: number;
  readonly logger?: Logger;
  readonly userAgent?: string;
  /** First backoff step in ms (default 400; tests use a few ms). */
  readonly retryBaseMs?: number;
  /** Limiter safety margin (default 0.03). */
  readonly rateMargin?: number;
  /** Cap on the sum of backoff sleeps of one request (default 30 s). */
  readonly maxBackoffTotalMs?: number;
  /**
   * Cap on the time one request spends waiting out 429s (default 10 min): a site that keeps answering 429 with a long
   * Retry-After (each capped at 5 min) would otherwise hold the request for most of an hour.
   */
  readonly maxRateLimitWaitMs?: number;
  /** Largest answer read (default 64 MiB): a bigger one fails the request instead of filling the memory. */
  readonly maxBodyBytes?: number;
  /**
   * A sync's stop. Once aborted, no request starts, and one not yet sent gives up at once with a StoppedError,
   * whether it waits for a rate-limit slot, a 429 pause (a Retry-After may ask for minutes) or a retry's backoff
   * (each stream then fails with it, its fetched work committed or discarded as usual). Requests in flight and token
   * refreshes are left to finish: abandoning a refresh could lose the rotated pair.
   */
  readonly signal?: AbortSignal;
}

/** Parses a site URL and enforces the HTTPS rule (plain http only to a loopback host); ConfigError if bad. */
export function checkBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(`site URL "${baseUrl}" is not a valid URL (expected e.g. https://grants.example.org)`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new ConfigError(
      `site URL ${url.origin} must use https:// (credentials travel over plain http only to a loopback host)`,
    );
  }
  if (url.username || url.password) throw new ConfigError('site URL must not contain a user name or password');
  return url;
}

/**
 * The largest answer read. A page of the largest --per-page (1,000 records) of large records (a note of ~100 KB
 * is among the data) stays far below; a site sending more (an endless body) fails the request instead of the memory.
 */
export const defaultMaxBodyBytes = 64 * 2 ** 20;

type Parser<T> = (text: string, res: HttpResponse) => ParseResult<T>;

interface Outcome<T> {
  readonly status: number;
  readonly value: T;
  readonly raw: string;
  readonly url: string;
  readonly fetchedAt: string;
}

/**
 * The site's REST API over HTTP, given its credentials as `auth` (`createSiteClient` in src/credentials/ gives it a
 * credential store's): requests authenticated with its token, one refresh per 401, through one limiter.
 */
export class HttpSiteClient implements SiteClient {
  readonly baseUrl: string;
  readonly stats: ClientStats = { requests: 0, byStatus: {}, retries: 0, rateLimited: 0, refreshes: 0, bytes: 0 };
  private readonly base: URL;
  private readonly transport: HttpTransport;
  private readonly tokens: SiteAuth;
  private readonly logger: Logger;
  private readonly perPage: number;
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly maxBackoffTotalMs: number;
  private readonly maxRateLimitWaitMs: number;
  private readonly signal: AbortSignal | undefined;

  constructor(options: HttpSiteClientOptions, auth: (exchange: TokenExchange) => SiteAuth) {
    this.base = checkBaseUrl(options.baseUrl);
    this.baseUrl = this.base.href.replace(/\/+$/, '');
    this.logger = options.logger ?? silentLogger;
    this.perPage = options.perPage ?? 100;
    this.maxRetries = options.maxRetries ?? 6;
    this.retryBaseMs = options.retryBaseMs ?? 400;
    this.maxBackoffTotalMs = options.maxBackoffTotalMs ?? 30_000;
    this.maxRateLimitWaitMs = options.maxRateLimitWaitMs ?? 600_000;
    this.signal = options.signal;
    // Every request waiting for a slot or a backoff listens for the stop: far more than Node's default warning
    // threshold of 10 listeners.
    if (this.signal) setMaxListeners(0, this.signal);
    this.transport = new HttpTransport({
      origin: this.base.origin,
      rate: options.rate ?? 5,
      margin: options.rateMargin,
      concurrency: options.concurrency ?? 8,
      timeoutMs: options.timeoutMs ?? 30_000,
      userAgent: options.userAgent ?? 'grantflow/0.1',
      maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes,
    });
    this.tokens = auth({
      refreshed: () => this.stats.refreshes++,
      send: async (form) => {
        const req: HttpRequest = {
          method: 'POST',
          url: this.resolve('/api/o/token/'),
          body: form.toString(),
          contentType: 'application/x-www-form-urlencoded',
        };
        // A 200 from the token endpoint has most likely rotated the pair already: asking again would only meet
        // invalid_grant, and its body (the new tokens, unknown to redact yet) must never be quoted.
        const out = await this.execute(req, false, parseTokenBody, { retryBadBody: false }).catch((e: unknown) => {
          if (!(e instanceof SiteResponseError)) throw e;
          throw new CredentialsError(
            `the token endpoint ${e.url} answered a refresh with a body that is not a JSON token response (not ` +
              'shown: it may hold tokens); the refresh may have used up the refresh token: if the next run says ' +
              "invalid_grant, generate a new credential set in the site's integration settings",
            { cause: e },
          );
        });
        return { body: out.value, url: out.url };
      },
    });
  }

  /** A path relative to the site base (which may carry a path prefix), or an absolute same-origin URL. */
  resolve(path: string, query?: QueryParams): URL {
    const url = /^https?:\/\//i.test(path)
      ? new URL(path)
      : new URL(this.base.pathname.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`), this.base);
    if (url.origin !== this.base.origin) {
      throw new ConfigError(`URL ${url.origin} is not on the site ${this.base.origin}; refusing to send credentials`);
    }
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  async getJson(path: string, query?: QueryParams) {
    const out = await this.execute({ method: 'GET', url: this.resolve(path, query) }, true, parseJson);
    return { status: out.status, body: out.value, raw: out.raw, url: out.url };
  }

  async postJson(path: string, body: JsonValue) {
    const req: HttpRequest = {
      method: 'POST',
      url: this.resolve(path),
      body: JSON.stringify(body),
      contentType: 'application/json',
    };
    const out = await this.execute(req, true, parseJson);
    return { status: out.status, body: out.value, raw: out.raw, url: out.url };
  }

  async download(path: string) {
    const out = await this.execute(
      { method: 'GET', url: this.resolve(path), accept: 'text/csv, */*;q=0.8' },
      true,
      parseDownload,
    );
    return { status: out.status, url: out.url, fetchedAt: out.fetchedAt, ...out.value };
  }

  paginate(path: string, options: PaginateOptions = {}): AsyncGenerator<FetchedPage, PaginationInfo> {
    const first = this.resolve(path, { per_page: this.perPage, ...options.query });
    const perPage = Number(first.searchParams.get('per_page') ?? this.perPage);
    return walkPages(
      first,
      async (url) => {
        const out = await this.execute({ method: 'GET', url }, true, parseListPage);
        return { status: out.status, page: out.value, raw: out.raw, url: out.url, fetchedAt: out.fetchedAt };
      },
      { ...options, perPage, logger: this.logger },
    );
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  /** One logical request: auth (single-flight refresh on 401), 429 backoff, retries of transient failures. */
  private async execute<T>(
    req: HttpRequest,
    auth: boolean,
    parse: Parser<T>,
    options: { readonly retryBadBody?: boolean } = {},
  ): Promise<Outcome<T>> {
    const url = req.url.href;
    let failures = 0;
    let rateLimited = 0;
    let staleRetries = 0;
    // Tokens this request saw rejected and refreshed. A request queued through 429 pauses can outlive the token a
    // refresh gave it (short lifetimes): past its early-refresh point it is refreshed again, while a token refused
    // while still fresh means the credentials are not this site's.
    const refreshedFrom = new Set<string>();
    let backoffTotal = 0;
    let rateLimitWaited = 0;
    // A token refresh (the only unauthenticated request) is never abandoned.
    const signal = auth ? this.signal : undefined;
    for (;;) {
      // Before each attempt, and before the transport may refresh a token due early: a stopped run starts nothing.
      if (signal?.aborted) throw stoppedRequest();
      let res: HttpResponse | null = null;
      let problem: string;
      let badBody = false;
      const fetchedAt = new Date().toISOString();
      try {
        res = await this.transport.send(req, auth ? this.tokens : null, signal);
      } catch (e) {
        if (e instanceof GrantflowError) throw e;
        const tls = tlsError(req.url.origin, e);
        if (tls) throw tls;
        if (hasCode(e, notLoopbackCode))
          throw new ConfigError(`${req.url.origin}: ${(e as Error).message}`, { cause: e });
        problem = describeNetworkError(e);
        // Sent (it took a rate-limit slot) but never answered: counted, or `requests` understates the traffic.
        this.stats.requests++;
        this.stats.byStatus.network = (this.stats.byStatus.network ?? 0) + 1;
      }
      if (res) {
        this.stats.requests++;
        this.stats.bytes += res.bytes;
        const key = String(res.status);
        this.stats.byStatus[key] = (this.stats.byStatus[key] ?? 0) + 1;
        this.logger.debug(
          { method: req.method, path: req.url.pathname + req.url.search, status: res.status, ms: res.ms },
          'request',
        );
        const status = res.status;
        if (status === 401 && auth) {
          const used = res.usedToken;
          if (used !== null && used !== this.tokens.accessToken) {
            // Sent with a token another request already replaced: just retry with the new one.
            if (++staleRetries <= 5) continue;
          } else if (
            !refreshedFrom.has(used ?? '') &&
            (refreshedFrom.size === 0 || (this.tokens.dueForRefresh && refreshedFrom.size < 3))
          ) {
            refreshedFrom.add(used ?? '');
            await this.tokens.refresh(used ?? '');
            continue;
          }
          throw new CredentialsError(
            `the site answered 401 for ${url} even with a freshly refreshed access token; check that the site ` +
              `URL is right and that the credentials in ${this.tokens.description} belong to this site`,
          );
        }
        if (status === 429) {
          this.stats.rateLimited++;
          rateLimited++;
          const wait = retryAfterMs(res.headers) ?? backoffMs(rateLimited, Math.max(this.retryBaseMs, 250));
          this.transport.limiter.penalize(wait);
          if (rateLimited > Math.max(this.maxRetries, 10)) {
            throw new SiteUnavailableError(url, 'HTTP 429 rate limited on every attempt', rateLimited);
          }
          if (rateLimitWaited + wait > this.maxRateLimitWaitMs) {
            const waited = `${Math.round(rateLimitWaited / 1000)} s`;
            throw new SiteUnavailableError(
              url,
              `HTTP 429 after ${waited} of waiting, the most one request waits`,
              rateLimited,
            );
          }
          rateLimitWaited += wait;
          // One short line (a URL folded it to three): the request's path is in its debug line.
          this.logger.warn({ waitMs: Math.round(wait), attempt: rateLimited }, 'rate limited (429), backing off');
          await sleep(wait, signal);
          continue;
        }
        if (status >= 200 && status < 300) {
          // A page that echoes a secret (the caller's token in a next link or in a record) must not carry it into the
          // raw files, the warehouse and the snapshots: the body and the URL are redacted before anyone reads them.
          // Not the token endpoint's: its body is the new pair, and may repeat a refresh token redact already knows.
          const body = auth ? redact(res.body) : res.body;
          const parsed = parse(body, res);
          if (parsed.ok) return { status, value: parsed.value, raw: body, url: redact(url), fetchedAt };
          problem = parsed.problem;
          badBody = true;
          if (options.retryBadBody === false) throw new SiteResponseError(url, problem);
        } else if (status >= 500) {
          // Redacted before it is cut: an error page echoing the request, cut through a token, would leave a piece
          // of it that redact no longer recognises.
          const text = redact(res.body);
          problem = `HTTP ${status}${text ? `: ${oneLine(text, 120)}` : ''}`;
        } else {
          const location = status >= 300 && status < 400 ? res.headers.location : undefined;
          throw new SiteHttpError(status, url, redact(res.body).slice(0, 500), errorCodeOf(res.body), location);
        }
      }
      failures++;
      if (failures > this.maxRetries) {
        if (badBody) throw new SiteResponseError(url, `${problem!} (after ${failures} attempts)`);
        throw new SiteUnavailableError(url, problem!, failures);
      }
      const wait = Math.min(backoffMs(failures, this.retryBaseMs), Math.max(0, this.maxBackoffTotalMs - backoffTotal));
      backoffTotal += wait;
      this.stats.retries++;
      this.logger.warn({ url, attempt: failures, waitMs: Math.round(wait), problem: redact(problem!) }, 'retrying');
      await sleep(wait, signal);
    }
  }
}

/** `error` (OAuth style) or `code` of a JSON error body. */
function errorCodeOf(body: string): string | undefined {
  const parsed = parseJson(body);
  if (!parsed.ok || !isJsonObject(parsed.value)) return undefined;
  const v: JsonValue | undefined = parsed.value.error ?? parsed.value.code;
  return typeof v === 'string' ? v : undefined;
}

/**
 * A downloaded file as received. An HTML page is what a site's error or login page looks like, not a report: it is
 * retried like an HTML answer to any other request (see execute), then fails the download.
 */
function parseDownload(_text: string, res: HttpResponse): ParseResult<DownloadedFile> {
  const type = res.headers['content-type'];
  const contentType = typeof type === 'string' && type.trim() !== '' ? type.trim() : null;
  const head = res.buffer
    .subarray(0, 512)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (/^text\/html\b/i.test(contentType ?? '') || head.startsWith('<!doctype html') || head.startsWith('<html'))
    return { ok: false, problem: 'an HTML page instead of the report file' };
  return { ok: true, value: { bytes: res.buffer, contentType } };
}

/** Parses a token response without ever quoting it: a body that is not JSON may still carry the new tokens. */
function parseTokenBody(text: string): ParseResult<JsonValue> {
  const json = parseJson(text);
  return json.ok ? json : { ok: false, problem: 'not JSON (the body is not shown: it may hold tokens)' };
}

/** Whether `e` or one of its causes carries the error code `code`. */
function hasCode(e: unknown, code: string): boolean {
  for (let x: unknown = e, depth = 0; x instanceof Error && depth < 4; x = x.cause, depth++)
    if ('code' in x && x.code === code) return true;
  return false;
}
