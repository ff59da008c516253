import { Pool, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { SiteResponseError } from './errors.ts';
import { RateLimiter, Semaphore, type Slot } from './throttle.ts';
import { whenWritten } from './request-written.ts';
import { loopbackOnlyLookup } from '../util/loopback-host.ts';

export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  readonly url: URL;
  readonly body?: string;
  readonly contentType?: string;
  /** The Accept header (default JSON; a report download accepts any file). */
  readonly accept?: string;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The body's bytes as received (a download that is not text is kept exactly). */
  readonly buffer: Buffer;
  readonly bytes: number;
  readonly ms: number;
  /** The access token the request carried, if any (to tell a stale-token 401 from a real one). */
  readonly usedToken: string | null;
}

/** What the transport asks the token manager before each authenticated request. */
export interface AuthGate {
  /** Resolves when no refresh is in flight (and the new tokens are saved). */
  ready(): Promise<void>;
  /** True while a refresh is in flight: nothing authenticated may start. */
  readonly blocked: boolean;
  readonly accessToken: string;
}

export interface HttpTransportOptions {
  readonly origin: string;
  readonly rate: number;
  readonly margin?: number;
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly userAgent: string;
  /** Largest answer read, in bytes: past it the request fails (not retried) and the connection is dropped. */
  readonly maxBodyBytes: number;
}

/**
 * One keep-alive pool per site origin, one limiter and one concurrency cap shared by every caller
 * (token refreshes included). `send` makes exactly one attempt; retries live in the site client.
 */
export class HttpTransport {
  readonly limiter: RateLimiter;
  private readonly semaphore: Semaphore;
  private readonly pool: Pool;

  constructor(private readonly options: HttpTransportOptions) {
    this.limiter = new RateLimiter({ rate: options.rate, margin: options.margin });
    this.semaphore = new Semaphore(options.concurrency);
    this.pool = new Pool(options.origin, {
      connections: options.concurrency,
      keepAliveTimeout: 10_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      // Plain http carries the tokens readable: only to this machine, checked on the address the name resolves to.
      ...(new URL(options.origin).protocol === 'http:' ? { connect: { lookup: loopbackOnlyLookup } } : {}),
    });
  }

  /**
   * `signal`, once aborted, takes a request still queued for a slot out of the queue (a StoppedError); one already
   * sent is left to finish.
   */
  async send(req: HttpRequest, auth: AuthGate | null, signal?: AbortSignal): Promise<HttpResponse> {
    for (;;) {
      // Wait for a refresh before taking a slot, so slots never sit blocked while the refresh needs one.
      if (auth) await auth.ready();
      // An unauthenticated request is a token refresh, which every authenticated one waits for: it goes first, or
      // requests queued before it would each spend a rate-limit slot only to find the refresh under way.
      const first = auth === null;
      const release = await this.semaphore.acquire(first, signal);
      try {
        const slot = await this.limiter.acquire(first, signal);
        if (auth?.blocked) continue; // a refresh began while we queued: wait for it, then queue again
        return await this.once(req, auth ? auth.accessToken : null, slot);
      } finally {
        release();
      }
    }
  }

  private async once(req: HttpRequest, token: string | null, slot: Slot): Promise<HttpResponse> {
    const headers: Record<string, string> = {
      accept: req.accept ?? 'application/json',
      'user-agent': this.options.userAgent,
    };
    if (token) headers.authorization = `Bearer ${token}`;
    if (req.contentType) headers['content-type'] = req.contentType;
    const started = performance.now();
    slot.started();
    const res = await whenWritten(
      () => slot.started(),
      () =>
        this.pool.request({
          method: req.method,
          path: `${req.url.pathname}${req.url.search}`,
          headers,
          body: req.body ?? null,
          signal: AbortSignal.timeout(this.options.timeoutMs),
        }),
    );
    const max = this.options.maxBodyBytes;
    const buf = await readCapped(res, max);
    if (!buf) {
      throw new SiteResponseError(
        req.url.href,
        `the answer is larger than ${max} bytes (${(max / 2 ** 20).toFixed(0)} MiB), the most grantflow reads; ` +
          'not read further (ask for smaller pages with --per-page)',
      );
    }
    return {
      status: res.statusCode,
      headers: res.headers,
      body: buf.toString('utf8'),
      buffer: buf,
      bytes: buf.length,
      ms: Math.round(performance.now() - started),
      usedToken: token,
    };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/**
 * A response body read in pieces against a cap, or null (the body dropped, so the connection closes) once it, or its
 * Content-Length, passes `max`: a site sending an endless or enormous body must not fill the memory.
 */
export async function readCapped(res: Dispatcher.ResponseData, max: number): Promise<Buffer | null> {
  const declared = Number(res.headers['content-length']);
  const chunks: Buffer[] = [];
  let size = Number.isFinite(declared) ? declared : 0;
  if (size <= max) {
    size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) break;
      chunks.push(chunk);
    }
  }
  if (size <= max) return Buffer.concat(chunks, size);
  res.body.destroy();
  return null;
}
