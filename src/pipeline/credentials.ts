import { createHash } from 'node:crypto';
import { FileCredentialStore, parseCredentials, registerCredentialSecrets } from '../source/index.ts';
import type { CredentialStore, Credentials } from '../source/types.ts';
import type { StoredCredentials, Warehouse } from '../warehouse/types.ts';
import { ConfigError, LockedError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { settingSource } from '../config/load-settings.ts';
import type { Settings } from '../config/settings.ts';
import { isSealed, StateKey, stateKeyVariable, StateKeyMismatch } from './state-key.ts';

/** The variables that carry a credential pair, by its fields. */
export const envKeys = {
  client_id: 'GRANTFLOW_CLIENT_ID',
  client_secret: 'GRANTFLOW_CLIENT_SECRET',
  access_token: 'GRANTFLOW_ACCESS_TOKEN',
  refresh_token: 'GRANTFLOW_REFRESH_TOKEN',
} as const;

/** True when the credentials come from environment variables (a CI runner with read-only secrets). */
export function credentialsFromEnv(env: NodeJS.ProcessEnv): boolean {
  return Object.values(envKeys).some((k) => env[k]);
}

/**
 * Which credentials a command uses. A credentials file wins when it was given as a flag (`--credentials FILE`):
 * flags win over variables. The GRANTFLOW_CLIENT_ID / _SECRET / _ACCESS_TOKEN / _REFRESH_TOKEN variables win
 * over a credentials file named in the pipeline file, as every variable wins over that file. A file named by
 * GRANTFLOW_CREDENTIALS next to those variables is ambiguous (both are variables): a ConfigError says to drop one.
 */
export function credentialsSource(
  settings: Pick<Settings, 'credentials'>,
  env: NodeJS.ProcessEnv,
): 'file' | 'environment' {
  if (!credentialsFromEnv(env)) return 'file';
  const fileFrom = settings.credentials === undefined ? undefined : settingSource(settings, 'credentials');
  if (fileFrom === 'flag') return 'file';
  if (fileFrom === 'environment') {
    const set = Object.values(envKeys).filter((k) => env[k]);
    throw new ConfigError(
      `credentials are given twice: GRANTFLOW_CREDENTIALS names a file and ${set.join(', ')} ${set.length > 1 ? 'are' : 'is'} ` +
        'set too; unset one of them (or pass --credentials FILE, which wins over both)',
    );
  }
  return 'environment';
}

/**
 * The environment as `runSync` should see it: without the GRANTFLOW_* credential variables when the credentials
 * file wins (see credentialsSource), since runSync decides by `credentialsFromEnv(env)` alone.
 */
export function environmentForCredentials(
  settings: Pick<Settings, 'credentials'>,
  env: NodeJS.ProcessEnv,
): NodeJS.ProcessEnv {
  if (credentialsSource(settings, env) === 'environment' || !credentialsFromEnv(env)) return env;
  const out = { ...env };
  for (const k of Object.values(envKeys)) delete out[k];
  return out;
}

const updateCiSecrets =
  'update the CI secrets GRANTFLOW_CLIENT_ID, GRANTFLOW_CLIENT_SECRET, GRANTFLOW_ACCESS_TOKEN and ' +
  'GRANTFLOW_REFRESH_TOKEN with it';

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
    private readonly warehouse: Warehouse,
    private readonly site: string,
    private readonly fromEnv: Credentials,
    private readonly logger?: Logger,
  ) {
    this.description = `the warehouse (${warehouse.description}), seeded from GRANTFLOW_* environment variables`;
    this.seed = createHash('sha256').update(fromEnv.refresh_token).digest('hex');
    this.stateKey = stateKeys.has(fromEnv) ? (stateKeys.get(fromEnv) ?? null) : StateKey.fromEnv(process.env);
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

/**
 * The sync summary's line on where the pair rotated from GRANTFLOW_* variables is kept: null when the credentials
 * come from a file (`env` as runSync sees it, see environmentForCredentials).
 */
export function storedPairNote(env: NodeJS.ProcessEnv): string | null {
  if (!credentialsFromEnv(env)) return null;
  return StateKey.fromEnv(env)
    ? `credentials: rotations are kept in the warehouse encrypted with ${stateKeyVariable}`
    : `credentials: rotations are kept in the warehouse UNENCRYPTED (table _grantflow_credentials): set ${stateKeyVariable} to encrypt them (docs/credentials.md)`;
}

/** The state key read with each set of variables: the store keeping their rotations seals with it. */
const stateKeys = new WeakMap<Credentials, StateKey | null>();

export function envCredentials(env: NodeJS.ProcessEnv): Credentials {
  const missing = Object.values(envKeys).filter((k) => !env[k]);
  if (missing.length > 0) {
    throw new ConfigError(`credentials from the environment need all four variables; missing: ${missing.join(', ')}`);
  }
  const creds = parseCredentials(
    Object.fromEntries(Object.entries(envKeys).map(([field, key]) => [field, env[key]])),
    'GRANTFLOW_* environment variables',
  );
  // Read (and checked) with the variables, from the same environment: a bad key stops the run before it writes.
  stateKeys.set(creds, StateKey.fromEnv(env));
  return creds;
}

/** The file store, validated now so a missing or corrupt file stops the run before anything is written. */
export async function fileCredentialStore(path: string | undefined): Promise<CredentialStore> {
  if (!path) {
    throw new ConfigError(
      'no credentials: pass --credentials FILE (JSON {client_id, client_secret, access_token, refresh_token}) or set GRANTFLOW_CLIENT_ID, GRANTFLOW_CLIENT_SECRET, GRANTFLOW_ACCESS_TOKEN and GRANTFLOW_REFRESH_TOKEN',
    );
  }
  const store = new FileCredentialStore(path);
  await store.load();
  await store.checkWritable();
  return store;
}

/**
 * The variables' pair on a first run, while the warehouse holds no rotated pair (no DuckDB file yet, no stored pair in
 * the Postgres schema): the site is checked with the variables before anything is created (a bad secret then writes
 * nothing). A rotation during that check proves the secret good and kills the variables' refresh token, so the new
 * pair is stored at once by `keep` (which creates the warehouse for it), before any further request: held only in
 * memory, it would die with the process (a kill, a failed check, a locked warehouse) and leave no working pair. Once
 * `attach` hands over the warehouse's own store, rotations go there. Another first run started at the same time may
 * win the race to refresh: the site then rejects the variables' refresh token as used, and `reload` finds the pair
 * that run stored (`storedMeanwhile`), or says it holds the warehouse and must finish first.
 */
export class FirstRunCredentialStore implements CredentialStore {
  readonly description = 'GRANTFLOW_* environment variables (no rotated pair stored yet)';
  readonly replaceAdvice = updateCiSecrets;
  private target: CredentialStore | null = null;
  private pending: Credentials | null = null;

  constructor(
    private readonly fromEnv: Credentials,
    private readonly keep: (credentials: Credentials) => Promise<void>,
    private readonly storedMeanwhile: () => Promise<Credentials | null>,
    private readonly logger?: Logger,
  ) {}

  load(): Promise<Credentials> {
    if (this.target) return this.target.load();
    registerCredentialSecrets(this.fromEnv);
    return Promise.resolve(this.pending ?? this.fromEnv);
  }

  async reload(): Promise<Credentials> {
    if (this.target || this.pending) return this.load();
    try {
      return (await this.storedMeanwhile()) ?? (await this.load());
    } catch (e) {
      if (!(e instanceof LockedError)) throw e;
      throw new LockedError(
        'the site rejected the refresh token as used: another grantflow run refreshed it first and keeps the new ' +
          `pair in the warehouse (the credentials need no change); ${e.message}`,
      );
    }
  }

  async save(credentials: Credentials): Promise<void> {
    registerCredentialSecrets(credentials);
    if (this.target) return this.target.save(credentials);
    this.pending = credentials;
    try {
      await this.keep(credentials);
    } catch (error) {
      // Kept in memory then, and saved by `attach` if the warehouse opens later in this run.
      this.logger?.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'could not store the rotated credentials in the warehouse yet; holding them until it opens',
      );
    }
  }

  /** From now on rotations go to `target`; one made before is saved there at once. */
  async attach(target: CredentialStore): Promise<void> {
    this.target = target;
    if (this.pending) await target.save(this.pending);
    this.pending = null;
  }
}
