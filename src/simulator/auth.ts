import { randomBytes } from 'node:crypto';
import type { Credentials } from '../credentials/types.ts';
import type { JsonObject } from '../util/json.ts';

interface CredentialSet {
  readonly id: number;
  readonly client_id: string;
  readonly client_secret: string;
  access_token: string;
  refresh_token: string;
  accessExpiresAt: number;
  revoked: boolean;
}

export type AuthResult =
  { ok: true; clientKey: string } | { ok: false; reason: 'missing' | 'invalid' | 'expired'; clientKey?: string };

export interface TokenReply {
  readonly status: number;
  readonly body?: JsonObject;
}

const token = (bytes = 24): string => randomBytes(bytes).toString('base64url');

/** Answers of the token endpoint so far: `rotated` (a refresh that replaced the pair), else by OAuth error code. */
export type TokenCounts = Readonly<Record<string, number>>;

/**
 * OAuth as the spec describes it, strictly: refresh ROTATES (the used refresh token and the old access
 * token die at once), issuing a new set invalidates the old ones, revocation kills both tokens.
 */
export class TokenStore {
  private readonly sets: CredentialSet[] = [];
  private readonly byAccess = new Map<string, CredentialSet>();
  private readonly byRefresh = new Map<string, CredentialSet>();
  private readonly outcomes = new Map<string, number>();

  constructor(
    public ttlSeconds: number,
    /** Scopes the admin user may request. */
    private readonly roles: readonly string[] = ['admin'],
  ) {}

  /**
   * A fresh credential set; by default the older sets stop working (spec 5.2). With `sameClient` it keeps the newest
   * set's client id and secret (the spec leaves open whether a new set changes them) and only the tokens are new.
   */
  issue(keepExisting = false, sameClient = false): Credentials {
    const previous = sameClient ? this.sets[this.sets.length - 1] : undefined;
    if (!keepExisting) this.revokeAll();
    const set: CredentialSet = {
      id: this.sets.length + 1,
      client_id: previous?.client_id ?? `sim-client-${token(9)}`,
      client_secret: previous?.client_secret ?? token(32),
      access_token: token(),
      refresh_token: token(),
      accessExpiresAt: Date.now() + this.ttlSeconds * 1000,
      revoked: false,
    };
    this.sets.push(set);
    this.byAccess.set(set.access_token, set);
    this.byRefresh.set(set.refresh_token, set);
    return this.credentialsOf(set);
  }

  /** The newest set's current tokens (they change when a client refreshes). */
  current(): Credentials {
    const set = this.sets[this.sets.length - 1];
    if (!set) throw new Error('no credentials issued');
    return this.credentialsOf(set);
  }

  revokeAll(): void {
    for (const set of this.sets) this.kill(set);
  }

  /** Makes every access token expired now (refresh tokens stay valid). */
  expireAccessTokens(): void {
    for (const set of this.sets) set.accessExpiresAt = 0;
  }

  authenticate(header: string | undefined): AuthResult {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m?.[1]) return { ok: false, reason: 'missing' };
    const set = this.byAccess.get(m[1]);
    if (!set || set.revoked) return { ok: false, reason: 'invalid' };
    if (Date.now() >= set.accessExpiresAt) return { ok: false, reason: 'expired', clientKey: `set:${set.id}` };
    return { ok: true, clientKey: `set:${set.id}` };
  }

  /** Rate-limit key of a token request: its credential set when the client id is known. */
  clientKeyFor(clientId: string | undefined): string | undefined {
    const set = this.newestOf(clientId);
    return set ? `set:${set.id}` : undefined;
  }

  /** How the token endpoint answered, counted since start (tests check that something did not rotate the pair). */
  counts(): TokenCounts {
    return Object.fromEntries(this.outcomes);
  }

  refresh(body: Record<string, string>): TokenReply {
    const reply = this.answerRefresh(body);
    const outcome = reply.status === 200 ? 'rotated' : String(reply.body?.error ?? reply.status);
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
    return reply;
  }

  /**
   * A refresh token it does not know answers `invalid_grant` only to a client whose id and secret are right, and
   * `invalid_client` otherwise (the client is checked first, as RFC 6749 has it): `doctor` tells a wrong secret this
   * way without using up the real refresh token.
   */
  private answerRefresh(body: Record<string, string>): TokenReply {
    if (body['grant_type'] !== 'refresh_token') return { status: 400, body: { error: 'unsupported_grant_type' } };
    const set = this.clientSet(body);
    if (!set) return { status: 403, body: { error: 'invalid_client' } };
    const presented = body['refresh_token'];
    if (!presented || set.revoked || set.refresh_token !== presented)
      return { status: 403, body: { error: 'invalid_grant' } };
    const scope = body['scope'];
    if (scope !== undefined && scope !== '' && !this.roles.includes(scope))
      return { status: 400, body: { error: 'invalid_scope' } };
    this.byAccess.delete(set.access_token);
    this.byRefresh.delete(set.refresh_token);
    set.access_token = token();
    set.refresh_token = token();
    set.accessExpiresAt = Date.now() + this.ttlSeconds * 1000;
    this.byAccess.set(set.access_token, set);
    this.byRefresh.set(set.refresh_token, set);
    return {
      status: 200,
      body: {
        access_token: set.access_token,
        expires_in: this.ttlSeconds,
        refresh_token: set.refresh_token,
        scope: scope ?? '',
        token_type: 'Bearer',
      },
    };
  }

  /** Both body variants of spec 4.8.2: `refresh_token`, or `token` with `token_hint`. */
  revoke(body: Record<string, string>): TokenReply {
    const set = this.clientSet(body);
    if (!set) return { status: 403, body: { error: 'invalid_client' } };
    const presented = body['refresh_token'] ?? body['token'];
    if (!presented) return { status: 400, body: { error: 'invalid_request' } };
    if (set.refresh_token === presented || set.access_token === presented) this.kill(set);
    // RFC 7009: an unknown token is not an error.
    return { status: 204 };
  }

  private clientSet(body: Record<string, string>): CredentialSet | undefined {
    const set = this.newestOf(body['client_id']);
    return set && set.client_secret === body['client_secret'] ? set : undefined;
  }

  /** Sets issued with `sameClient` share a client id: the newest is the one that can still work. */
  private newestOf(clientId: string | undefined): CredentialSet | undefined {
    for (let i = this.sets.length - 1; i >= 0; i--) if (this.sets[i]!.client_id === clientId) return this.sets[i];
    return undefined;
  }

  private kill(set: CredentialSet): void {
    set.revoked = true;
    this.byAccess.delete(set.access_token);
    this.byRefresh.delete(set.refresh_token);
  }

  private credentialsOf(set: CredentialSet): Credentials {
    return {
      client_id: set.client_id,
      client_secret: set.client_secret,
      access_token: set.access_token,
      refresh_token: set.refresh_token,
    };
  }
}
