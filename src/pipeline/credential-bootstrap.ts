import { dirname, resolve } from 'node:path';
import { createSiteClient } from '../source/index.ts';
import type { Credentials, CredentialStore, SiteClient } from '../source/types.ts';
import type { Settings } from '../config/settings.ts';
import { isNewDuckDBFile, openConfiguredWarehouse, warehouseMayHoldCredentials } from '../warehouse/index.ts';
import type { RunRecord, Warehouse } from '../warehouse/types.ts';
import type { Logger } from '../util/logger.ts';
import { checkWritableDir } from '../util/writable-dir.ts';
import {
  credentialsFromEnv,
  envCredentials,
  fileCredentialStore,
  FirstRunCredentialStore,
  WarehouseCredentialStore,
} from './credentials.ts';
import { preflight, probeConnect } from './preflight.ts';
import type { SyncStop } from './sync-stop.ts';
import { siteOfRun } from './warehouse-site.ts';

/** What a sync works with once its credentials are proven: a checked client, and its warehouse, prepared. */
export interface SiteAccess {
  readonly client: SiteClient;
  readonly warehouse: Warehouse;
  /** The warehouse's last run, as `prepare` read it. */
  readonly last: RunRecord | undefined;
}

export interface ConnectRequest {
  readonly site: string;
  readonly settings: Settings;
  readonly logger: Logger;
  readonly stop: SyncStop;
  /** Opens the sync's warehouse. */
  readonly open: () => Promise<Warehouse>;
  /**
   * Makes the open warehouse ready (run lock, migrations, the one-site check) before any pair is stored in it, and
   * returns its last run, whose site a moved site's pair is carried from.
   */
  readonly prepare: (warehouse: Warehouse) => Promise<RunRecord | undefined>;
}

/**
 * Where a sync's credentials come from (a credentials file, or read-only GRANTFLOW_* variables), read and validated
 * before anything is written; `connect` then proves them against the site and opens the warehouse, in the order that
 * keeps a rotated pair safe.
 */
export class SyncCredentials {
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
   * The site checked with these credentials and the warehouse opened and prepared; on failure both are closed.
   *
   * With a credentials file (or the variables on a first run) the site is checked before the warehouse is even
   * opened: a wrong site or secret writes nothing. With the variables the full check otherwise needs the warehouse
   * (it may hold a newer rotated pair than the variables, and a refresh must be saved there before anything else),
   * so it runs after opening it; a bare connect to the site needs no credentials, and a --site where nothing answers
   * then writes nothing either. On a first run (no DuckDB file yet, or a Postgres schema holding no pair) there is no
   * newer pair, so the variables' pair is checked before the file or any table is created; a rotation meanwhile
   * proves it good, and the FirstRunCredentialStore creates the warehouse to keep the new pair before the check goes
   * on.
   */
  async connect(request: ConnectRequest): Promise<SiteAccess> {
    const { site, settings, logger, stop } = request;
    const makeClient = (store: CredentialStore): SiteClient =>
      createSiteClient({
        baseUrl: site,
        store,
        rate: settings.rate,
        perPage: settings.perPage,
        concurrency: settings.concurrency,
        logger,
        signal: stop.signal,
      });
    const firstRun = this.fileStore ? null : await this.firstRunStore(site, settings, logger);
    const earlyStore = this.fileStore ?? firstRun;
    let client: SiteClient | null = null;
    if (earlyStore) {
      client = makeClient(earlyStore);
      await preflight(client).catch(async (e: unknown) => {
        await client?.close();
        throw stop.errorOf(e);
      });
    }

    let warehouse: Warehouse;
    try {
      warehouse = await request.open();
    } catch (error) {
      await client?.close();
      throw error;
    }
    try {
      // Before anything of this run is written (a credential pair, the run's row).
      const last = await request.prepare(warehouse);
      // The variables' pair is used up by the rotations stored for the last run's address: a site that moved (or the
      // same address spelt otherwise, which the site check accepts without --site-moved) goes on from those.
      const held = siteOfRun(last);
      if (this.fromEnv && held !== undefined && held !== site) await warehouse.carryCredentials(held, site);
      // A first run's client is already checked: only its store moves into the warehouse.
      if (firstRun) await firstRun.attach(new WarehouseCredentialStore(warehouse, site, this.fromEnv!, logger));
      if (!client) {
        client = makeClient(new WarehouseCredentialStore(warehouse, site, this.fromEnv!, logger));
        await preflight(client).catch((e: unknown) => {
          throw stop.errorOf(e);
        });
      }
      stop.throwIfStopped();
      return { client, warehouse, last };
    } catch (error) {
      await client?.close();
      await warehouse.close();
      throw error;
    }
  }

  /**
   * With the variables: after a bare connect to the site, the store of a first run (see connect), or null when the
   * warehouse may hold a rotated pair already (a site that moved, or whose address is spelt otherwise, may find its
   * pair stored for the address of the last run, carried over once the warehouse is open).
   */
  private async firstRunStore(
    site: string,
    settings: Settings,
    logger: Logger,
  ): Promise<FirstRunCredentialStore | null> {
    const fromEnv = this.fromEnv!;
    await probeConnect(site);
    if (await warehouseMayHoldCredentials(settings, null, logger)) return null;
    if (isNewDuckDBFile(settings.warehouse))
      checkWritableDir(dirname(resolve(settings.warehouse)), 'warehouse directory', 'choose another --warehouse');
    return new FirstRunCredentialStore(
      fromEnv,
      (pair) => keepFirstRotation(settings, site, fromEnv, pair, logger),
      () => pairStoredMeanwhile(settings, site, fromEnv, logger),
      logger,
    );
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
