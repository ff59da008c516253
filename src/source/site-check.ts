import { connect } from 'node:net';
import { request } from 'undici';
import { SiteHttpError, SiteResponseError } from './errors.ts';
import { readCapped } from './http.ts';
import { parseJson } from './pagination.ts';
import { unreachable } from './retry.ts';
import { checkBaseUrl } from './site-client.ts';
import type { SiteClient } from './types.ts';
import { ConfigError, GrantflowError } from '../util/errors.ts';
import { redact } from '../util/redact.ts';
import { loopbackOnlyLookup, notLoopbackCode } from '../util/loopback-host.ts';

/**
 * One cheap call before anything is written: proves the URL is the API (JSON, not a web page or a 404) and that the
 * credentials work (refreshing them if the access token expired). A wrong site is a configuration error (exit 2).
 */
export async function preflight(client: SiteClient): Promise<void> {
  await probeConnect(client.baseUrl);
  try {
    await client.getJson('/api/programs/', { per_page: 1 });
  } catch (error) {
    if (error instanceof SiteResponseError) {
      throw new ConfigError(`${client.baseUrl} does not answer like the grant API (${error.problem}); check --site`, {
        cause: error,
      });
    }
    if (error instanceof SiteHttpError) {
      // Not followed: a redirect would carry the access token to wherever it points.
      if (error.status >= 300 && error.status < 400) {
        const to = error.location ? ` to ${redact(error.location)}` : '';
        throw new ConfigError(
          `${client.baseUrl} redirects (HTTP ${error.status}${to}); grantflow follows no redirects, so give the address they lead to as --site`,
          { cause: error },
        );
      }
      if (error.status === 404) {
        throw new ConfigError(
          `${client.baseUrl}/api/programs/ was not found (HTTP 404); check that --site is the site's base URL`,
          { cause: error },
        );
      }
      if (error.status === 401) {
        throw new ConfigError(
          `${client.baseUrl} rejected the credentials even after a token refresh (HTTP 401); check --site and the credentials`,
          { cause: error },
        );
      }
      // 403: programs hidden from this user is not fatal; the streams report what they cannot read.
      if (error.status === 403) return;
    }
    throw error;
  }
}

/** Far more than a one-program page (per_page=1) or an error page of the API can be. */
const probeMaxBytes = 2 ** 20;

/**
 * Checks that the site is reachable and is the grant API without sending any credentials (`grantflow doctor` with
 * credentials from GRANTFLOW_* variables: using them would rotate a pair the operator cannot rewrite). One
 * unauthenticated GET of the programs list: the API answers it with a JSON 401 (or 403, or even 200); a web page,
 * a 404 or no answer at all means --site is wrong. Returns what was seen, for the report line.
 */
export async function probeSiteWithoutCredentials(baseUrl: string, timeoutMs = 15_000): Promise<string> {
  const base = checkBaseUrl(baseUrl);
  await probeConnect(base.href);
  const url = new URL(`${base.pathname.replace(/\/+$/, '')}/api/programs/?per_page=1`, base);
  let status: number;
  let body: Buffer | null;
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'grantflow/0.1 (doctor)' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.statusCode;
    body = await readCapped(res, probeMaxBytes);
  } catch (error) {
    throw unreachable(url, error);
  }
  if (status === 404) {
    throw new ConfigError(`${url.href} was not found (HTTP 404); check that --site is the site's base URL`);
  }
  if (status >= 500) {
    throw new GrantflowError(
      `${url.href} answered HTTP ${status}; the site seems down, try again later`,
      1,
      'site_unavailable',
    );
  }
  // More than any one-program page could hold is not the grant API (and is not read on: it must not fill the memory).
  if (!body) {
    throw new ConfigError(
      `${base.href.replace(/\/+$/, '')} does not answer like the grant API (HTTP ${status} with more than 1 MiB for /api/programs/?per_page=1); check --site`,
    );
  }
  const json = parseJson(body.toString('utf8'));
  if (!json.ok || typeof json.value !== 'object' || json.value === null) {
    throw new ConfigError(
      `${base.href.replace(/\/+$/, '')} does not answer like the grant API (HTTP ${status} without a JSON body for /api/programs/); check --site`,
    );
  }
  return `HTTP ${status} with a JSON body for /api/programs/ without credentials`;
}

/** Failures of a bare TCP connect that mean "nothing of ours is there", not "the site is briefly down". */
const wrongAddress = new Set(['ECONNREFUSED', 'ENOTFOUND']);
/** Failures that say the network is down rather than the address wrong: worth a retry later (exit 1). */
const networkDown = new Set(['EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN']);

/**
 * A bare TCP connect to the site's host and port (no HTTP request, so no rate-limit cost): a refused connection or
 * an unknown host is a wrong --site, reported at once (exit 2) instead of after ~20 s of the client's retries.
 * Anything else (a slow connect, a reset) is left to the real request and its retries.
 */
export async function probeConnect(baseUrl: string): Promise<void> {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return;
  }
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const code = await new Promise<string | null>((done) => {
    const lookup = url.protocol === 'http:' ? { lookup: loopbackOnlyLookup } : {};
    const socket = connect({ host, port, ...lookup });
    const finish = (c: string | null): void => {
      socket.destroy();
      done(c);
    };
    socket.setTimeout(10_000, () => finish(null));
    socket.once('connect', () => finish(null));
    socket.once('error', (e: NodeJS.ErrnoException) => finish(e.code ?? null));
  });
  if (code === notLoopbackCode) {
    throw new ConfigError(
      `${url.origin} is plain http to a host that does not resolve to this machine; use https:// (credentials travel ` +
        'over plain http only to a loopback host)',
    );
  }
  if (code && wrongAddress.has(code)) {
    throw new ConfigError(`nothing answers at ${url.origin} (${code}); check --site`);
  }
  if (code && networkDown.has(code)) {
    throw new GrantflowError(
      `cannot reach ${url.origin} (${code}): the network seems down; nothing was written, try again later`,
    );
  }
}
