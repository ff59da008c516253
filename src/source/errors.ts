import { GrantflowError, ExitCode } from '../util/errors.ts';
import { redact } from '../util/redact.ts';

/** The site could not be reached or kept failing (network, 5xx, garbage bodies) after every retry. */
export class SiteUnavailableError extends GrantflowError {
  constructor(
    readonly url: string,
    readonly lastProblem: string,
    attempts: number,
  ) {
    super(
      redact(`site unavailable: ${url} failed ${attempts} times; last problem: ${lastProblem}`),
      ExitCode.runFailed,
      'site_unavailable',
    );
  }
}

/** A 4xx the caller may want to handle (403 permission missing, 404 feature not enabled). Not retried. */
export class SiteHttpError extends GrantflowError {
  constructor(
    readonly status: number,
    readonly url: string,
    /** First 500 characters of the body, redacted. */
    readonly body: string,
    /** `error` (or `code`) of a JSON error body, when there is one. */
    readonly errorCode?: string,
    /** Where a redirect (3xx) points: the client follows none, so the message must say where to look. */
    readonly location?: string,
  ) {
    const detail = location
      ? ` (a redirect to ${location}, which grantflow does not follow)`
      : errorCode
        ? ` (${errorCode})`
        : body
          ? `: ${oneLine(body, 200)}`
          : '';
    super(redact(`site answered HTTP ${status} for ${url}${detail}`), ExitCode.runFailed, 'site_http');
  }
}

/**
 * The site refused the access token (HTTP 401) to a client that may not refresh it (doctor): a refresh rotates the
 * pair, so the token is left as it is and the caller reports what it found.
 */
export class AccessTokenRefused extends GrantflowError {
  constructor() {
    super(
      'the site refused the access token (HTTP 401) and it was not refreshed',
      ExitCode.runFailed,
      'access_token_refused',
    );
  }
}

/** A 200 whose body is not the JSON shape we expected, even after retries. */
export class SiteResponseError extends GrantflowError {
  constructor(
    readonly url: string,
    readonly problem: string,
  ) {
    super(redact(`unexpected response from ${url}: ${problem}`), ExitCode.runFailed, 'site_response');
  }
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}
