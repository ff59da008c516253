import { dirname, resolve } from 'node:path';
import type { Settings } from '../config/settings.ts';
import { probeConnect } from '../source/site-check.ts';
import { isNewDuckDBFile, warehouseMayHoldCredentials } from '../warehouse/index.ts';
import type { Warehouse } from '../warehouse/types.ts';
import type { Logger } from '../util/logger.ts';
import { checkWritableDir } from '../util/writable-dir.ts';
import { credentialsFromEnv, envCredentials } from './env-credentials.ts';
import { fileCredentialStore } from './file-store.ts';
import { FirstRunCredentialStore } from './first-run-store.ts';
import type { Credentials, CredentialStore } from './types.ts';
import { type CredentialBookkeeping, WarehouseCredentialStore } from './warehouse-store.ts';

/**
 * Where a sync's credentials come from (a credentials file, or read-only GRANTFLOW_* variables), read and validated
 * before anything is written. The sync then asks for its store twice, in the order that keeps a rotated pair safe:
 *
 * - `beforeWarehouse`: the store to check the site with before the warehouse is even opened, so a wrong site or
 *   secret writes nothing. A credentials file; or the variables on a first run (no DuckDB file yet, or a Postgres
 *   schema holding no pair), as there is no newer pair yet (a rotation during that check is kept at once, see
 *   FirstRunCredentialStore). Null when the warehouse may hold a pair newer than the variables: the check needs it.
 * - `inWarehouse`, once the sync has opened and prepared its warehouse (run lock, migrations, the one-site check):
 *   the store for the rest of the run. With the variables that is the warehouse's, and a first run's rotations move
 *   into it.
 */
export class SyncCredentials {
  private firstRun: FirstRunCredentialStore | null = null;

  private constructor(
    /** A credentials file, validated; null with credentials from the variables. */
    private readonly fileStore: CredentialStore | null,
    /** The variables' pair; null with a credentials file. */
    private readonly fromEnv: Credentials | null,
  ) {}

  /** A missing or corrupt file, or an incomplete set of variables, is a ConfigError now. */
  static async read(settings: Settings, env: NodeJS.ProcessEnv): Promise<SyncCredentials> {
    if (credentialsFromEnv(env)) return new SyncCredentials(null, envCredentials(env));
    return new SyncCredentials(await fileCredentialStore(settings.credentials), null);
  }

  /**
   * The store to check the site with before the warehouse opens, or null (see the class). With the variables a bare
   * connect to the site comes first, as it needs no credentials: a --site where nothing answers writes nothing either.
   */
  async beforeWarehouse(site: string, settings: Settings, logger: Logger): Promise<CredentialStore | null> {
    if (this.fileStore) return this.fileStore;
    const fromEnv = this.fromEnv!;
    await probeConnect(site);
    // A site that moved (or whose address is spelt otherwise) may find its pair stored for the last run's address.
    if (await warehouseMayHoldCredentials(settings, null, logger)) return null;
    if (isNewDuckDBFile(settings.warehouse))
      checkWritableDir(dirname(resolve(settings.warehouse)), 'warehouse directory', 'choose another --warehouse');
    this.firstRun = new FirstRunCredentialStore(settings, site, fromEnv, logger);
    return this.firstRun;
  }

  /**
   * The store for the rest of the run, given the sync's warehouse, prepared, and the site its last run synced (see
   * the class). The variables' pair is used up by the rotations stored for the last run's address: a site that moved
   * (or the same address spelt otherwise, which the site check accepts without --site-moved) goes on from those.
   */
  async inWarehouse(
    warehouse: CredentialBookkeeping & Pick<Warehouse, 'carryCredentials'>,
    site: string,
    lastSite: string | undefined,
    logger: Logger,
  ): Promise<CredentialStore> {
    if (this.fileStore) return this.fileStore;
    if (lastSite !== undefined && lastSite !== site) await warehouse.carryCredentials(lastSite, site);
    const store = new WarehouseCredentialStore(warehouse, site, this.fromEnv!, logger);
    // A first run's client is already checked: only its store moves into the warehouse.
    await this.firstRun?.attach(store);
    return store;
  }
}
