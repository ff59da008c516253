import type { Logger } from '../util/logger.ts';
import { ConfigError, CredentialsError, GrantflowError, LockedError } from '../util/errors.ts';
import { registerSecret } from '../util/redact.ts';
import { isJsonObject, type JsonValue } from '../util/json.ts';
import { AccessTokenRefused, SiteHttpError, SiteResponseError } from '../source/errors.ts';
import { sleep } from '../source/retry.ts';
import type { SiteAuth, TokenExchange } from '../source/types.ts';
import { registerCredentialSecrets } from './credential-pair.ts';
import type { Credentials, CredentialStore } from './types.ts';

export interface TokenManagerOptions {
  readonly store: CredentialStore;
  /** How the site client sends a token request and counts a refresh. */
  readonly exchange: TokenExchange;
  readonly logger: Logger;
  readonly scope?: string;
  /** Refresh this long before a known expiry (default 120 s). */
  readonly earlyMs?: number;
  /** False: never refresh, since each refresh rotates the pair; a refresh throws AccessTokenRefused instead. */
  readonly refreshTokens?: boolean;
}

/** Every refresh under way in this process, from its request until its new pair is saved (or it failed). */
const refreshesInFlight = new Set<Promise<void>>();

/**
 * Resolves once no refresh is under way. A process about to exit at once (a second Ctrl-C) waits for this first: the
 * site kills the old refresh token the moment it answers, so exiting before the new pair is saved loses both.
 */
export async function refreshesSettled(): Promise<void> {
  while (refreshesInFlight.size > 0) await Promise.allSettled([...refreshesInFlight]);
}

/**
 * Holds the current credentials. Refreshes are single-flight: every 401 that arrives while one is running
 * waits for it, and a 401 for an already-replaced token only retries. While a refresh runs (until the store
 * has saved the new pair) no authenticated request starts: the old refresh token is dead on the site.
 */
export class TokenManager implements SiteAuth {
  private creds: Credentials | null = null;
  private loading: Promise<void> | null = null;
  private refreshing: Promise<void> | null = null;
  /** When to refresh proactively; known only after a refresh that reported `expires_in`. */
  private refreshAt: number | null = null;
  /** A refresh failure nobody can recover from in this run; every later request fails with it at once. */
  private fatal: unknown = null;

  constructor(private readonly options: TokenManagerOptions) {}

  get blocked(): boolean {
    return this.refreshing !== null;
  }

  /** The current access token is past the point where it is refreshed early: it may have expired by now. */
  get dueForRefresh(): boolean {
    return this.refreshAt !== null && Date.now() >= this.refreshAt;
  }

  get description(): string {
    return this.options.store.description;
  }

  get accessToken(): string {
    if (!this.creds) throw new Error('TokenManager used before ready()');
    return this.creds.access_token;
  }

  async ready(): Promise<void> {
    if (this.fatal) throw this.fatal;
    if (!this.creds) {
      this.loading ??= this.options.store.load().then((c) => {
        registerCredentialSecrets(c);
        this.creds = c;
      });
      try {
        await this.loading;
      } finally {
        if (!this.creds) this.loading = null;
      }
    }
    while (this.refreshing) await this.refreshing;
    if (this.dueForRefresh) {
      this.options.logger.debug('access token near expiry; refreshing early');
      await this.refresh(this.accessToken);
    }
  }

  /** Refreshes unless `staleToken` was already replaced; concurrent callers share one refresh. */
  async refresh(staleToken: string): Promise<void> {
    if (this.options.refreshTokens === false) throw new AccessTokenRefused();
    if (this.refreshing) return this.refreshing;
    if (!this.creds || this.creds.access_token !== staleToken) return;
    const current = this.creds;
    const refreshing: Promise<void> = this.doRefresh(current)
      .catch((e: unknown) => {
        if (e instanceof GrantflowError && e.code !== 'site_unavailable') this.fatal = e;
        throw e;
      })
      .finally(() => {
        this.refreshing = null;
        refreshesInFlight.delete(refreshing);
      });
    refreshesInFlight.add(refreshing);
    this.refreshing = refreshing;
    return refreshing;
  }

  private async doRefresh(current: Credentials): Promise<void> {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: current.client_id,
      client_secret: current.client_secret,
      refresh_token: current.refresh_token,
    });
    if (this.options.scope) form.set('scope', this.options.scope);
    let result: { body: JsonValue; url: string };
    // The site counts the new token's lifetime from its answer; the save below can take a while (a checkpoint on a
    // busy disk), so the early-refresh point is counted from before the request, not from after the save.
    const requestedAt = Date.now();
    const mark = await this.options.store.markRefresh?.();
    let next: Credentials;
    try {
      try {
        result = await this.options.exchange.send(form);
      } catch (e) {
        if (e instanceof SiteHttpError && e.errorCode === 'invalid_grant') {
          // Another process's refresh used the token first: it marked before sending, so once no mark remains the
          // pair it rotated is saved (or it was killed before saving it, and that pair is lost).
          await mark?.waitForOthers();
          if (await this.adoptNewerStored(current)) return;
        }
        throw this.explain(e);
      }
      next = parseTokenResponse(result.body, current, result.url);
      this.options.exchange.refreshed();
      // Persist before anyone sends with the new token: a lost refresh token needs a manual reset.
      await this.options.store.save(next);
    } finally {
      await mark?.release();
    }
    this.creds = next;
    this.options.logger.info({ store: this.options.store.description }, 'access token refreshed and saved');
    const expiresIn = isJsonObject(result.body) ? result.body.expires_in : undefined;
    if (typeof expiresIn === 'number' && expiresIn > 0) {
      // Refresh `earlyMs` before expiry, but never sooner than half the lifetime (short-lived tokens).
      const lifeMs = expiresIn * 1000;
      this.refreshAt = requestedAt + Math.max(lifeMs - (this.options.earlyMs ?? 120_000), lifeMs / 2);
    }
  }

  /**
   * Another process using the same store (a `doctor` during a scheduled sync, two pipelines sharing one file) may
   * have refreshed first, killing the refresh token this one holds: the store then holds the newer pair. Adopted, the
   * caller retries with it instead of failing with invalid_grant. A store that marks refreshes (markRefresh) has the
   * pair saved by now; one that does not may still be saving it, so the store is read again for a second. Where the other process holds that pair out of reach (a warehouse it has open), a
   * LockedError says so: the credentials are fine, and the next run once it is done finds the pair.
   */
  private async adoptNewerStored(current: Credentials): Promise<boolean> {
    const store = this.options.store;
    const deadline = Date.now() + 1_000;
    this.options.logger.info(
      { store: store.description },
      'the site rejected the refresh token as used; looking for a pair another run sharing these credentials stored',
    );
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await sleep(250);
      let held: LockedError | null = null;
      const stored = await (store.reload ? store.reload() : store.load()).catch((e: unknown) => {
        if (e instanceof LockedError) held = e;
        return null;
      });
      // The other process holds the pair out of reach: waiting longer would not change that.
      if (held) throw held;
      if (stored && stored.refresh_token !== current.refresh_token && stored.client_id === current.client_id) {
        this.creds = stored;
        this.options.logger.warn(
          { store: this.options.store.description },
          'the refresh token was used by another process sharing these credentials; continuing with the pair it saved',
        );
        return true;
      }
      if (Date.now() >= deadline) return false;
    }
  }

  private explain(e: unknown): unknown {
    if (!(e instanceof SiteHttpError)) return e;
    const store = this.options.store;
    const advice = store.replaceAdvice ?? `put it in ${store.description}`;
    if (e.errorCode === 'invalid_grant') {
      return new CredentialsError(
        `the site rejected the refresh token (invalid_grant: used, expired or revoked); generate a new ` +
          `credential set in the site's integration settings and ${advice}`,
        { cause: e },
      );
    }
    if (e.errorCode === 'invalid_client') {
      return new CredentialsError(
        `the site rejected the client id / client secret (invalid_client); generate a new credential set (or copy ` +
          `the client id and secret again) in the site's integration settings and ${advice}`,
        { cause: e },
      );
    }
    if (e.errorCode === 'invalid_scope') {
      return new ConfigError(
        `the site rejected scope "${this.options.scope ?? ''}" (invalid_scope); use one of the roles of the ` +
          'user who generated the credentials (applicant, recommender, reviewer, admin) or omit it',
        { cause: e },
      );
    }
    return new GrantflowError(`token refresh failed: ${e.message}`, 1, 'refresh_failed', { cause: e });
  }
}

function parseTokenResponse(body: JsonValue, current: Credentials, url: string): Credentials {
  if (!isJsonObject(body)) throw new SiteResponseError(url, 'token response is not a JSON object');
  const access = body.access_token;
  const refresh = body.refresh_token;
  // Register before anything can log them.
  if (typeof access === 'string') registerSecret(access);
  if (typeof refresh === 'string') registerSecret(refresh);
  if (typeof access !== 'string' || access.length === 0) {
    throw new SiteResponseError(url, 'token response has no access_token');
  }
  return {
    client_id: current.client_id,
    client_secret: current.client_secret,
    access_token: access,
    // The site issues a new refresh token; keep the old one only if it (unexpectedly) does not.
    refresh_token: typeof refresh === 'string' && refresh.length > 0 ? refresh : current.refresh_token,
  };
}
