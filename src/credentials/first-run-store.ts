import type { Settings } from '../config/settings.ts';
import {
  markCredentialRefresh,
  openConfiguredWarehouse,
  warehouseMayHoldCredentials,
  type RefreshMark,
} from '../warehouse/index.ts';
import { LockedError } from '../util/errors.ts';
import { testPause } from '../util/test-pause.ts';
import type { Logger } from '../util/logger.ts';
import { registerCredentialSecrets } from './credential-pair.ts';
import { updateCiSecrets } from './env-credentials.ts';
import type { Credentials, CredentialStore } from './types.ts';
import { WarehouseCredentialStore } from './warehouse-store.ts';

/**
 * The variables' pair on a first run, while the warehouse holds no rotated pair (no DuckDB file yet, no stored pair in
 * the Postgres schema): the site is checked with the variables before anything is created (a bad secret then writes
 * nothing). A rotation during that check proves the secret good and kills the variables' refresh token, so the new
 * pair is stored at once (keepFirstRotation creates the warehouse for it), before any further request: held only in
 * memory, it would die with the process (a kill, a failed check, a locked warehouse) and leave no working pair. Once
 * `attach` hands over the warehouse's own store, rotations go there. Another first run started at the same time may
 * win the race to refresh: the site then rejects the variables' refresh token as used, and `reload` finds the pair
 * that run stored (pairStoredMeanwhile), or says it holds the warehouse and must finish first.
 */
export class FirstRunCredentialStore implements CredentialStore {
  readonly description = 'GRANTFLOW_* environment variables (no rotated pair stored yet)';
  readonly replaceAdvice = updateCiSecrets;
  private target: CredentialStore | null = null;
  private pending: Credentials | null = null;

  constructor(
    private readonly settings: Settings,
    private readonly site: string,
    private readonly fromEnv: Credentials,
    private readonly logger: Logger,
  ) {}

  load(): Promise<Credentials> {
    if (this.target) return this.target.load();
    registerCredentialSecrets(this.fromEnv);
    return Promise.resolve(this.pending ?? this.fromEnv);
  }

  async reload(): Promise<Credentials> {
    if (this.target || this.pending) return this.load();
    try {
      return (await pairStoredMeanwhile(this.settings, this.site, this.fromEnv, this.logger)) ?? (await this.load());
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
    // A test holds the save here to show that another first run waits for it, however long it takes.
    await testPause('first run rotation saving');
    try {
      await keepFirstRotation(this.settings, this.site, this.fromEnv, credentials, this.logger);
    } catch (error) {
      // Kept in memory then, and saved by `attach` if the warehouse opens later in this run.
      this.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'could not store the rotated credentials in the warehouse yet; holding them until it opens',
      );
    }
  }

  /**
   * Before the warehouse is attached, another first run from the same variables may refresh at the same time and
   * store its pair in the warehouse it then creates: both mark their refreshes there, so the one the site refuses
   * waits for the other's save rather than a guessed while (see TokenManager.doRefresh). Once attached, the
   * warehouse's store decides.
   */
  async markRefresh(): Promise<RefreshMark | undefined> {
    if (this.target) return this.target.markRefresh?.();
    return markCredentialRefresh(this.settings);
  }

  /** From now on rotations go to `target`; one made before is saved there at once. */
  async attach(target: CredentialStore): Promise<void> {
    this.target = target;
    if (this.pending) await target.save(this.pending);
    this.pending = null;
  }
}

/**
 * Stores a pair rotated before the run opened its warehouse (see FirstRunCredentialStore): opens (creates) it with its
 * bookkeeping tables only, and saves the pair there. Quick, as the check waits for it with a fresh access token; no run
 * lock: the migrations take their own and the pair is one upserted row.
 */
async function keepFirstRotation(
  settings: Settings,
  site: string,
  fromEnv: Credentials,
  pair: Credentials,
  logger: Logger,
): Promise<void> {
  const warehouse = await openConfiguredWarehouse(settings, logger);
  try {
    // Names this run to another one refused meanwhile (see nameHolder).
    await warehouse.nameHolder(`grantflow sync (pid ${process.pid})`);
    await warehouse.migrateBookkeeping();
    await new WarehouseCredentialStore(warehouse, site, fromEnv, logger).save(pair);
  } finally {
    await warehouse.close();
  }
}

/**
 * The pair another first run rotated from the same variables and stored (see keepFirstRotation), read without
 * creating anything; null when there is none. A LockedError when that run holds the DuckDB file.
 */
async function pairStoredMeanwhile(
  settings: Settings,
  site: string,
  fromEnv: Credentials,
  logger: Logger,
): Promise<Credentials | null> {
  if (!(await warehouseMayHoldCredentials(settings, site, logger))) return null;
  const warehouse = await openConfiguredWarehouse(settings, logger, { existingOnly: true, readOnly: true });
  try {
    return await new WarehouseCredentialStore(warehouse, site, fromEnv, logger).load();
  } finally {
    await warehouse.close();
  }
}
