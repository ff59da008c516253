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
  /**
   * How long, after the site rejected our refresh token as used, `reload` is tried for a pair another process is
   * still storing (default 1 s): about as long as that process takes from its refresh to its save.
   */
  readonly adoptWindowMs?: number;
  save(credentials: Credentials): Promise<void>;
}
