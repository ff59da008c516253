import type { IncomingHttpHeaders } from 'node:http';
import { ConfigError, ExitCode, GrantflowError, StoppedError } from '../util/errors.ts';

/** Exponential backoff with "equal jitter": half fixed, half random, so retries of many callers spread out. */
export function backoffMs(attempt: number, baseMs: number, maxMs = 10_000): number {
  const d = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return d / 2 + Math.random() * (d / 2);
}

/** `Retry-After` as seconds or an HTTP date, in ms; null when absent or unreadable. Capped at 5 min. */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | null {
  const raw = headers['retry-after'];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined || v.trim() === '') return null;
  let ms: number;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return null;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, 300_000);
}

/** A short, token-free description of a network failure. */
export function describeNetworkError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const code = 'code' in e && typeof e.code === 'string' ? e.code : undefined;
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'request timed out';
  const causeCode =
    e.cause instanceof Error && 'code' in e.cause && typeof e.cause.code === 'string' ? e.cause.code : undefined;
  return [code ?? causeCode, e.message].filter(Boolean).join(': ');
}

/**
 * OpenSSL's verdicts on a server certificate, and TLS handshake failures (an https URL on a plain-http port): they
 * do not pass with time, so they are not retried.
 */
const tlsCodes =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_[A-Z_]+|ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH|INVALID_CA|ERR_SSL_[A-Z_]+)$/;

/** The code of a certificate or TLS handshake failure (on the error or its cause), or null for anything else. */
export function tlsFailure(e: unknown): string | null {
  for (let x: unknown = e, depth = 0; x instanceof Error && depth < 4; x = x.cause, depth++) {
    const code = 'code' in x && typeof x.code === 'string' ? x.code : undefined;
    if (code && tlsCodes.test(code)) return code;
  }
  return null;
}

/** The configuration error (exit 2) for a certificate or TLS handshake failure reaching `origin`; null for others. */
export function tlsError(origin: string, e: unknown): ConfigError | null {
  const tls = tlsFailure(e);
  if (!tls) return null;
  return new ConfigError(
    `${origin} failed the TLS check (${tls}); check --site, or trust its certificate authority with NODE_EXTRA_CA_CERTS`,
    { cause: e },
  );
}

/**
 * Why a single check request to `url` got no answer: the TLS verdict (exit 2) when it was one, else "cannot reach"
 * (exit 1, `site_unavailable`). For one-shot probes; the site client retries instead.
 */
export function unreachable(url: URL, e: unknown): GrantflowError {
  return (
    tlsError(url.origin, e) ??
    new GrantflowError(
      `cannot reach ${url.href} (${describeNetworkError(e)}); try again later`,
      ExitCode.runFailed,
      'site_unavailable',
      { cause: e },
    )
  );
}

/** What a request that a stop finds not yet sent (new, or waiting for a backoff or a slot) fails with. */
export function stoppedRequest(): StoppedError {
  return new StoppedError('stopped before it finished: the run is stopping');
}

/**
 * Waits until `resolve` is handed a value by `enqueue`, or, once `signal` is aborted, gives up: `dequeue` takes the
 * waiter back out of its queue (so no slot is handed to it) and the wait fails with a StoppedError.
 */
export function abortableWait<T>(
  signal: AbortSignal | undefined,
  enqueue: (resolve: (value: T) => void) => void,
  dequeue: (resolve: (value: T) => void) => void,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(stoppedRequest());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      dequeue(done);
      reject(stoppedRequest());
    };
    const done = (value: T): void => {
      signal?.removeEventListener('abort', onAbort);
      resolve(value);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    enqueue(done);
  });
}

/** Resolves after `ms`; with a signal, fails with a StoppedError as soon as the signal is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return abortableWait<void>(
    signal,
    (resolve) => (timer = setTimeout(resolve, ms)),
    () => clearTimeout(timer),
  );
}
