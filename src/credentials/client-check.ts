import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { checkBaseUrl, parseJson, probeConnect, unreachable } from '../source/index.ts';
import { readCapped } from '../source/http.ts';
import { CredentialsError, GrantflowError } from '../util/errors.ts';
import { isJsonObject } from '../util/json.ts';
import type { Credentials } from './types.ts';

/** What the check found when the site's answer tells nothing either way: said as a warning, not a failure. */
export class ClientCheckUndecided {
  constructor(readonly message: string) {}
}

const attempts = 3;

/**
 * Checks a client id and secret without using (and so rotating) the refresh token: a refresh with a made-up refresh
 * token is refused `invalid_grant` when the site knows the client, `invalid_client` when the id or secret is wrong
 * (the client is authenticated before the grant is looked at, RFC 6749 section 5.2; the simulator does the same). A
 * wrong pair is a CredentialsError (exit 2) whose advice ends with `advice`; an answer that tells neither (a site
 * answering otherwise) is a ClientCheckUndecided, returned; a site that does not answer is a GrantflowError: exit 2
 * when nothing listens at the address (probeConnect, as the site check says), exit 1 for a failure that may pass.
 */
export async function checkClient(
  baseUrl: string,
  client: Pick<Credentials, 'client_id' | 'client_secret'>,
  advice: string,
  timeoutMs = 15_000,
): Promise<string | ClientCheckUndecided> {
  const base = checkBaseUrl(baseUrl);
  // The connect probe the site check makes too: the same network failure gets the same verdict and advice on both lines.
  await probeConnect(base.href);
  const url = new URL(`${base.pathname.replace(/\/+$/, '')}/api/o/token/`, base);
  // No site issued it: 32 random bytes never match a live refresh token.
  const form = new URLSearchParams({
    grant_type: 'refresh_token',
    client_id: client.client_id,
    client_secret: client.client_secret,
    refresh_token: `grantflow-doctor-${randomBytes(32).toString('base64url')}`,
  });
  for (let attempt = 1; ; attempt++) {
    let status: number;
    let body: Buffer | null;
    let retryAfter: string | undefined;
    try {
      const res = await request(url, {
        method: 'POST',
        body: form.toString(),
        headers: {
          accept: 'application/json',
          'content-type': 'application/x-www-form-urlencoded',
          'user-agent': 'grantflow/0.1 (doctor)',
        },
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.statusCode;
      retryAfter = [res.headers['retry-after']].flat()[0];
      body = await readCapped(res, 2 ** 16);
    } catch (error) {
      throw unreachable(url, error);
    }
    if (status === 429 && attempt < attempts) {
      const seconds = Number(retryAfter);
      await new Promise((done) => setTimeout(done, Number.isFinite(seconds) ? Math.min(seconds, 10) * 1000 : 1000));
      continue;
    }
    if (status >= 500 || status === 429) {
      throw new GrantflowError(
        `the token endpoint ${url.href} answered HTTP ${status}; try again later`,
        1,
        'site_unavailable',
      );
    }
    // The body is never quoted: a site answering 200 to this would be sending tokens.
    const parsed = body && status !== 200 ? parseJson(body.toString('utf8')) : null;
    const code = parsed?.ok && isJsonObject(parsed.value) ? parsed.value.error : undefined;
    if (code === 'invalid_grant')
      return 'the site knows the client id and secret (a made-up refresh token was refused as invalid_grant; nothing was rotated)';
    if (code === 'invalid_client' || code === 'unauthorized_client') {
      throw new CredentialsError(
        `the site rejected the client id / client secret (${code}, checked with a made-up refresh token, so nothing ` +
          `was rotated); copy them again from the site's integration settings (or generate a new credential set) and ${advice}`,
      );
    }
    return new ClientCheckUndecided(
      `could not tell whether the client id and secret are right: the token endpoint answered a made-up refresh token ` +
        `with HTTP ${status}${typeof code === 'string' ? ` (${code})` : ''}, not invalid_grant or invalid_client; the first token refresh of a sync checks them`,
    );
  }
}
