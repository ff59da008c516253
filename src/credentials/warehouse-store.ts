import { createHash } from 'node:crypto';
import type { StoredCredentials, Warehouse } from '../warehouse/types.ts';
import { ConfigError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { registerCredentialSecrets } from './credential-pair.ts';
import { stateKeyOf, updateCiSecrets } from './env-credentials.ts';
import { isSealed, type StateKey, stateKeyVariable, StateKeyMismatch } from './state-key.ts';
import type { CredentialStore, Credentials } from './types.ts';

/** What the store needs of a warehouse: its credential bookkeeping (`_grantflow_credentials`). */
export type CredentialBookkeeping = Pick<
  Warehouse,
  'description' | 'readCredentials' | 'writeCredentials' | 'checkpoint'
>;

/**
 * Credentials from environment variables cannot be rewritten, yet each refresh rotates them: the rotated pair is
 * kept in the warehouse (`_grantflow_credentials`, keyed by site) and later runs read it first. With
 * GRANTFLOW_STATE_KEY (read with the variables, see envCredentials) its secret, access token and refresh token are
 * stored sealed (state-key.ts), so analysts' tools that may read the table see no live token.
 */
export class WarehouseCredentialStore implements CredentialStore {
  readonly description: string;
  /** The variables are the operator's copy; the warehouse only keeps rotations of them. */
  readonly replaceAdvice = updateCiSecrets;
  /** Stored with each pair: which variables' refresh token it descends from (a hash: the token may be live). */
  private readonly seed: string;
  private readonly stateKey: StateKey | null;

  constructor(
    private readonly warehouse: CredentialBookkeeping,
    private readonly site: string,
    private readonly fromEnv: Credentials,
    private readonly logger?: Logger,
  ) {
    this.description = `the warehouse (${warehouse.description}), seeded from GRANTFLOW_* environment variables`;
    this.seed = createHash('sha256').update(fromEnv.refresh_token).digest('hex');
    this.stateKey = stateKeyOf(fromEnv);
  }

  /** Whether pairs are stored encrypted (GRANTFLOW_STATE_KEY is set). */
  get encrypted(): boolean {
    return this.stateKey !== null;
  }

  async load(): Promise<Credentials> {
    const creds = (await this.storedPair()) ?? this.fromEnv;
    registerCredentialSecrets(creds);
    return creds;
  }

  /**
   * The stored pair when it is newer than the variables, that is when it descends from them. The operator may have
   * put a new set in the variables since (the old one dead); the site may keep the client id and secret across sets,
   * so the refresh token the stored pair was rotated from tells them apart. A pair stored before that was kept goes
   * by client alone. Told by the columns kept plain first: a pair of an older set is passed over without its key
   * (a new set in the variables is how to start again after losing the key). A pair stored plain before a key was set
   * is rewritten sealed.
   */
  private async storedPair(): Promise<Credentials | null> {
    const found = await this.descendant();
    if (!found) return null;
    const { stored, pair } = found;
    if (this.stateKey && sealedFields.some((f) => !isSealed(stored[f]))) {
      try {
        await this.warehouse.writeCredentials(this.site, await this.sealed(pair, stored.seeded_from ?? null));
      } catch (error) {
        // A read-only look (another first run's pair): the run that holds the warehouse seals it, as does any rotation.
        this.logger?.warn(
          { err: error instanceof Error ? error.message : String(error) },
          `could not rewrite the credential pair stored unencrypted in the warehouse with ${stateKeyVariable} yet; the next token refresh stores it encrypted`,
        );
      }
    }
    return pair;
  }

  /** The stored pair, opened, when it descends from the variables (see storedPair). */
  private async descendant(): Promise<{ stored: StoredCredentials; pair: Credentials } | null> {
    const stored = await this.warehouse.readCredentials(this.site);
    if (!stored || stored.client_id !== this.fromEnv.client_id) return null;
    if (stored.seeded_from != null && stored.seeded_from !== this.seed) return null;
    const pair = await this.opened(stored);
    return pair.client_secret === this.fromEnv.client_secret ? { stored, pair } : null;
  }

  /**
   * What the warehouse holds for the site, read without writing anything (doctor): `none`, `older` (a pair of an
   * older credential set, which the variables replace), or one the next run uses, `encrypted` or `unencrypted`. A
   * ConfigError when it is sealed and the key is missing or another.
   */
  async storedState(): Promise<'none' | 'older' | 'encrypted' | 'unencrypted'> {
    const stored = await this.warehouse.readCredentials(this.site);
    if (!stored) return 'none';
    const found = await this.descendant();
    if (!found) return 'older';
    return sealedFields.every((f) => isSealed(found.stored[f])) ? 'encrypted' : 'unencrypted';
  }

  async save(credentials: Credentials): Promise<void> {
    registerCredentialSecrets(credentials);
    await this.warehouse.writeCredentials(this.site, await this.sealed(credentials, this.seed));
    // Committed, the pair may still sit only in DuckDB's WAL (checkpoints wait for 1 GB of it): a runner that keeps
    // only the main file (a copy of warehouse.duckdb taken after a cancelled job) would restore the dead pair. A checkpoint
    // now is cheap (one row, and whatever loads committed since the last one) and puts the live pair in the file.
    try {
      await this.warehouse.checkpoint();
    } catch (error) {
      // DuckDB refuses while another load's write transaction is open ("other write transactions active"; FORCE would
      // abort that load). The pair is committed in the WAL either way (a copy of the warehouse must take the WAL too):
      // a failed checkpoint must not fail the refresh, nor alarm anyone.
      this.logger?.debug(
        { err: error instanceof Error ? error.message : String(error) },
        'could not checkpoint the warehouse after saving rotated credentials; they are in its WAL file',
      );
    }
  }

  /** The pair as it is stored: its secret parts sealed when there is a key. */
  private async sealed(pair: Credentials, seededFrom: string | null): Promise<StoredCredentials> {
    const key = this.stateKey;
    const part = (f: SealedField): Promise<string> =>
      key ? key.seal(pair[f], sealingContext(f, pair.client_id)) : Promise.resolve(pair[f]);
    return {
      client_id: pair.client_id,
      client_secret: await part('client_secret'),
      access_token: await part('access_token'),
      refresh_token: await part('refresh_token'),
      seeded_from: seededFrom,
    };
  }

  /** The stored pair in plain text; a ConfigError (exit 2) when it is sealed and the key is missing or another. */
  private async opened(stored: StoredCredentials): Promise<Credentials> {
    return {
      client_id: stored.client_id,
      client_secret: await this.openedPart(stored, 'client_secret'),
      access_token: await this.openedPart(stored, 'access_token'),
      refresh_token: await this.openedPart(stored, 'refresh_token'),
    };
  }

  private async openedPart(stored: StoredCredentials, f: SealedField): Promise<string> {
    if (!isSealed(stored[f])) return stored[f];
    const lost = `or, if that key is lost, generate a new credential set in the site's integration settings and ${updateCiSecrets}`;
    if (!this.stateKey) {
      throw new ConfigError(
        `the credential pair stored in ${this.warehouse.description} for ${this.site} is encrypted and ` +
          `${stateKeyVariable} is not set: set it to the key the pair was stored with (${lost})`,
      );
    }
    try {
      return await this.stateKey.open(stored[f], sealingContext(f, stored.client_id));
    } catch (e) {
      if (!(e instanceof StateKeyMismatch)) throw e;
      throw new ConfigError(
        `${stateKeyVariable} does not open the credential pair stored in ${this.warehouse.description} for ` +
          `${this.site} (it was stored with another key, or altered): set the key it was stored with (${lost})`,
        { cause: e },
      );
    }
  }
}

/** The parts of a pair sealed with GRANTFLOW_STATE_KEY; the client id stays plain (it is no secret and tells sets apart). */
const sealedFields = ['client_secret', 'access_token', 'refresh_token'] as const;
type SealedField = (typeof sealedFields)[number];

/** What a sealed value is, authenticated with it: a value moved to another column or client does not open. */
function sealingContext(field: SealedField, clientId: string): string {
  return `_grantflow_credentials.${field} of client ${clientId}`;
}
