import { HttpSiteClient, type HttpSiteClientOptions } from '../source/site-client.ts';
import type { SiteClient } from '../source/types.ts';
import { silentLogger } from '../util/logger.ts';
import { TokenManager } from './token-manager.ts';
import type { CredentialStore } from './types.ts';

export interface SiteClientOptions extends HttpSiteClientOptions {
  /** Where the pair is read from, and where a rotated pair is saved before any further request. */
  readonly store: CredentialStore;
  readonly scope?: string;
  /**
   * False for a client that only looks (doctor): it never refreshes the access token, since each refresh rotates the
   * pair; a 401 fails the request with AccessTokenRefused instead (default true).
   */
  readonly refreshTokens?: boolean;
}

/** A site client whose requests carry the store's access token, refreshed (and the pair saved) on a 401. */
export function createSiteClient(options: SiteClientOptions): SiteClient {
  const { store, scope, refreshTokens, ...client } = options;
  return new HttpSiteClient(
    client,
    (exchange) => new TokenManager({ store, exchange, logger: client.logger ?? silentLogger, scope, refreshTokens }),
  );
}
