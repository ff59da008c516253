import type { RefreshMark } from '../warehouse/types.ts';

export interface Credentials {
  readonly client_id: string;
  readonly client_secret: string;
  readonly access_token: string;
  readonly refresh_token: string;
}

/** Where credentials live; `save` must be durable (and atomic, for files) before it resolves. */
export interface CredentialStore {
  /** Where they live, for messages (never the secrets themselves). */
  readonly description: string;
  /**
   * What the operator does with a new credential set, completing "generate a new credential set in the site's
   * integration settings and ...". Default: "put it in <description>".
   */
  readonly replaceAdvice?: string;
  load(): Promise<Credentials>;
  /**
   * The pair as another process may have stored it since `load`, read after the site rejected ours as used (default
   * `load`). A LockedError says where that pair is and that its holder must finish first.
   */
  reload?(): Promise<Credentials>;
  save(credentials: Credentials): Promise<void>;
  /**
   * Marks, before a refresh request is sent, that this process refreshes the pair (see RefreshMark), where other
   * processes may refresh the same pair and find it only once saved; absent where none can.
   */
  markRefresh?(): Promise<RefreshMark | undefined>;
}
