import { join } from 'node:path';
import { runExtract } from '../extract/extract-run.ts';
import { Mutex } from '../extract/mutex.ts';
import { detectPageSize } from '../extract/page-size.ts';
import { RawLanding } from '../extract/raw-landing.ts';
import type { StreamDef } from '../streams/stream-def.ts';
import type { StreamCatalog } from '../streams/catalog.ts';
import { defaultCatalog } from '../streams/registry.ts';
import type { StreamInfo } from '../extract/types.ts';
import type { SiteClient } from '../source/types.ts';
import { defaultPerPage, type Settings } from '../config/settings.ts';
import { openConfiguredWarehouse } from '../warehouse/index.ts';
import type { LockWait, RunRecord, Warehouse } from '../warehouse/types.ts';
import { ConfigError, ExitCode } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { loadAllSqlTests, modelTableNames } from '../models/index.ts';
import { checkWritableDir } from '../util/writable-dir.ts';
import { testPause } from '../util/test-pause.ts';
import { afterLoad } from './after-load.ts';
import { keyForMode } from '../privacy/pseudonym-key.ts';
import { purgeAfterLoad } from './purge-step.ts';
import { recordDrift } from './drift-catalog.ts';
import { migrateWithPromotions, promotionsOf } from './promote-step.ts';
import type { Promotion } from '../normalize/promotions.ts';
import { UnknownFields } from '../extract/unknown-fields.ts';
import { createSiteClient, SyncCredentials, type CredentialStore } from '../credentials/index.ts';
import { preflight } from '../source/site-check.ts';
import { SyncRun, type SyncResult } from './sync-run.ts';
import { SyncStop } from './sync-stop.ts';
import { TimeBudget } from './time-budget.ts';
import { durationMs } from '../config/duration.ts';
import { defaultMaxStreamMs } from '../extract/walk-limits.ts';
import { checkWarehouseSite, siteOfRun } from './warehouse-site.ts';
import { runProgress } from './run-progress.ts';
import { pruneRawAfterSync } from './raw-retention-step.ts';
import { reportRefreshOption } from '../extract/report-refresh.ts';

export { SyncStoppedError, type SyncResult } from './sync-run.ts';

export interface SyncRequest {
  readonly settings: Settings;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** Live progress lines (default: when stderr is a TTY). */
  readonly tty?: boolean;
  /**
   * Aborted (with a StoppedError naming why, e.g. a signal) to stop the sync: no new request starts, commits under
   * way finish (a Postgres one waiting for another session's table lock rolls back at its next attempt), no model,
   * data test or snapshot starts and a snapshot being written is abandoned (see afterLoad), the run is recorded as
   * interrupted (the next sync resumes it) and runSync throws SyncStoppedError.
   */
  readonly signal?: AbortSignal;
  /**
   * Postgres: how long a load waits for another session's lock on a table it writes before the run fails (default
   * 2 s attempts for 5 min; see postgres/lock-wait.ts). For tests, which cannot wait minutes.
   */
  readonly loadLockWait?: LockWait;
  /** The streams to know (default: the built-in ones); a program that adds an endpoint builds its own. */
  readonly catalog?: StreamCatalog;
  /** Runs once the run is recorded, on the same warehouse and under the run lock (see AfterSync). */
  readonly afterSync?: AfterSync;
}

/**
 * Work a caller adds after a sync, on its warehouse while the run lock is still held, so what it reads is the run just
 * recorded: the CLI writes the report here (report/after-sync.ts). Returns the result, with what it did added.
 */
export type AfterSync = (
  result: SyncResult,
  warehouse: Warehouse,
  settings: Settings,
  logger: Logger,
) => Promise<SyncResult>;

/**
 * One sync: validate everything that can be validated before writing (settings, streams, credentials, snapshot
 * directory, the site itself), then lock the warehouse, extract and load every stream, run models and data tests,
 * write snapshots, and record the run. A run that was killed is resumed under its own run id.
 */
export async function runSync(request: SyncRequest): Promise<SyncResult> {
  const { settings, logger } = request;
  const started = Date.now();
  if (!settings.site)
    throw new ConfigError('no site: pass --site URL (or GRANTFLOW_SITE, or "site" in the pipeline file)');
  const site = settings.site.replace(/\/+$/, '');
  const catalog = request.catalog ?? defaultCatalog;
  const streams = catalog.select(settings.streams ?? null);
  // A bad file in --models-dir (header, name, cycle) is a configuration error, found before anything is written.
  const models = settings.models ? modelTableNames(settings.modelsDir) : undefined;
  if (settings.models) loadAllSqlTests(settings.modelsDir);
  const promotions = promotionsOf(settings, catalog);
  // `pseudonymize` without its key stops here (exit 2), before anything is read or written.
  const pseudonymKey = keyForMode(settings.personalData, request.env ?? process.env);
  const credentials = await SyncCredentials.read(settings, request.env ?? process.env);
  await checkOutputDirs(settings);

  const stop = new SyncStop(request.signal);
  const budget = TimeBudget.of(settings.maxDuration, started);
  try {
    const { client, warehouse, last } = await connect({
      site,
      settings,
      logger,
      stop,
      credentials,
      loadLockWait: request.loadLockWait,
      models,
      promotions,
      catalog,
    });
    try {
      const run = await SyncRun.begin(warehouse, last, {
        site,
        started,
        fullRefresh: settings.fullRefresh,
        streams: streams.map((d) => d.name),
        siteTimeZone: settings.siteTimeZone,
        logger,
      });
      const unknownFields = new UnknownFields();
      const infos = await extract({
        catalog,
        run,
        last,
        streams,
        client,
        warehouse,
        stop,
        budget,
        settings,
        logger,
        tty: request.tty,
        unknownFields,
        promotions,
      });
      // The budget cuts the extraction only: once every stream is read, models and snapshots follow.
      budget.dispose();
      const drift = await recordDrift(warehouse, unknownFields, run.runId, logger);
      const work = { streams: infos, client: client.stats, ...(drift ? { drift } : {}) };

      await testPause('sync extraction finished');
      // A stop (during the extraction or since) starts nothing further: no model, data test or snapshot (see afterLoad).
      if (stop.stopped) await run.stopped(stop, work, null);
      if (budget.reached && infos.some((i) => i.status === 'interrupted')) {
        const reason = `time budget of ${settings.maxDuration ?? ''} reached: the next sync continues`;
        logger.info({ runId: run.runId }, `${reason}; models and snapshots wait for the run to complete`);
        return await run.paused(work, reason);
      }
      const failed = infos.some((i) => i.status === 'failed');
      // After the load that soft-deleted rows, before the models and snapshots that would copy them again.
      const purge = await purgeAfterLoad(warehouse, settings, catalog, logger);
      // Models and analysts query next; loads took no statistics (see refreshStatistics).
      await warehouse.refreshStatistics();
      const after = await afterLoad(warehouse, settings, run.runId, failed, logger, stop.signal, catalog, {
        key: pseudonymKey,
        purge,
      });
      if (after.stopped) await run.stopped(stop, work, after);
      const ok = !failed && !after.failed;
      if (ok) await pruneRawAfterSync(warehouse, settings, run.runId, logger);
      const result = await run.finish(ok ? 'succeeded' : 'partial', work, after, ok ? ExitCode.ok : ExitCode.runFailed);
      return request.afterSync ? await request.afterSync(result, warehouse, settings, logger) : result;
    } finally {
      await client.close();
      await warehouse.close();
    }
  } finally {
    budget.dispose();
    stop.dispose();
  }
}

/** What a sync works with once its credentials are proven: a checked client, and its warehouse, prepared. */
interface SiteAccess {
  readonly client: SiteClient;
  readonly warehouse: Warehouse;
  /** The warehouse's last run, as prepareWarehouse read it. */
  readonly last: RunRecord | undefined;
}

/**
 * The site checked with the sync's credentials and its warehouse opened and prepared; on failure both are closed.
 * The credentials say which store to check the site with before the warehouse opens (a wrong site or secret then
 * writes nothing), and which after: the warehouse may hold a pair newer than GRANTFLOW_* variables, and a refresh must
 * be saved there before anything else (see SyncCredentials).
 */
async function connect(request: {
  readonly site: string;
  readonly settings: Settings;
  readonly logger: Logger;
  readonly stop: SyncStop;
  readonly credentials: SyncCredentials;
  readonly loadLockWait: LockWait | undefined;
  readonly models: readonly string[] | undefined;
  readonly promotions: readonly Promotion[];
  readonly catalog: StreamCatalog;
}): Promise<SiteAccess> {
  const { site, settings, logger, stop, credentials } = request;
  const checkedClient = async (store: CredentialStore): Promise<SiteClient> => {
    const client = createSiteClient({
      baseUrl: site,
      store,
      rate: settings.rate,
      perPage: settings.perPage,
      concurrency: settings.concurrency,
      logger,
      signal: stop.signal,
    });
    try {
      await preflight(client);
      return client;
    } catch (e) {
      await client.close();
      throw stop.errorOf(e);
    }
  };
  const early = await credentials.beforeWarehouse(site, settings, logger);
  let client = early ? await checkedClient(early) : null;
  let warehouse: Warehouse;
  try {
    warehouse = await openSyncWarehouse(settings, logger, stop.signal, request.loadLockWait, request.models);
  } catch (error) {
    await client?.close();
    throw error;
  }
  try {
    // Before anything of this run is written (a credential pair, the run's row).
    const last = await prepareWarehouse(warehouse, site, settings, logger, request.promotions, request.catalog);
    const store = await credentials.inWarehouse(warehouse, site, siteOfRun(last), logger);
    client ??= await checkedClient(store);
    stop.throwIfStopped();
    return { client, warehouse, last };
  } catch (error) {
    await client?.close();
    await warehouse.close();
    throw error;
  }
}

/** Opened to write: a stop ends a wait for another session's table lock too (within one attempt), not only requests. */
function openSyncWarehouse(
  settings: Settings,
  logger: Logger,
  stop: AbortSignal,
  loadLockWait: LockWait | undefined,
  models: readonly string[] | undefined,
): Promise<Warehouse> {
  return openConfiguredWarehouse(settings, logger, {
    stop,
    // Their rebuild replaces them: one another role owns is refused now, not after the load and the models before it.
    ...(models ? { models } : {}),
    ...(loadLockWait ? { loadLockWait } : {}),
  });
}

/**
 * The run lock, a killed snapshot write undone, the schema migrated; then another site's warehouse is refused before
 * anything of this run is written (a credential pair, the run's row). Returns the last run.
 */
async function prepareWarehouse(
  warehouse: Warehouse,
  site: string,
  settings: Settings,
  logger: Logger,
  promotions: readonly Promotion[],
  catalog: StreamCatalog,
): Promise<RunRecord | undefined> {
  await warehouse.acquireLock(`grantflow sync (pid ${process.pid})`);
  if (settings.snapshot) await undoKilledSnapshot(settings, logger);
  await migrateWithPromotions(warehouse, promotions, catalog);
  const last = (await warehouse.listRuns(1))[0];
  checkWarehouseSite(last, site, settings.siteMoved, warehouse.description);
  return last;
}

/** What the extraction stage is given: the run, where it reads from and writes to, and what bounds it. */
interface ExtractStage {
  readonly catalog: StreamCatalog;
  readonly run: SyncRun;
  readonly last: RunRecord | undefined;
  readonly streams: StreamDef[];
  readonly client: SiteClient;
  readonly warehouse: Warehouse;
  readonly stop: SyncStop;
  readonly budget: TimeBudget;
  readonly settings: Settings;
  readonly logger: Logger;
  readonly tty: boolean | undefined;
  readonly unknownFields: UnknownFields;
  readonly promotions: readonly Promotion[];
}

/** Every stream read and loaded, its pages landed first when asked (see RawLanding). */
async function extract(stage: ExtractStage): Promise<StreamInfo[]> {
  const { run, last, streams, client, warehouse, stop, budget, settings, logger, tty } = stage;
  const raw = settings.landRaw ? new RawLanding(join(settings.rawDir, run.runId)) : null;
  const mutex = new Mutex();
  const extractedAt = new Date().toISOString();
  const probe = { client, warehouse, mutex, runId: run.runId, extractedAt, logger };
  const detect = settings.detectPageSize ?? settings.perPage === defaultPerPage;
  const pageSize = detect ? await detectPageSize(probe, settings.perPage) : undefined;
  const options = {
    fullRefreshStreams: run.fullRefreshStreams,
    fullRefreshAfterDays: settings.fullRefreshAfterDays,
    fullRefreshMode: settings.fullRefreshMode,
  };
  const progress = await runProgress({
    logger,
    tty,
    target: settings.warehouse,
    warehouse,
    runId: run.runId,
    client,
    last,
    streams,
    options,
    extractedAt,
  });
  await raw?.open();
  try {
    return await runExtract(
      {
        catalog: stage.catalog,
        client,
        warehouse,
        mutex,
        raw,
        runId: run.runId,
        extractedAt,
        resuming: run.resumed,
        stop: stop.controller,
        budget: budget.signal,
        unknownFields: stage.unknownFields,
        promotions: stage.promotions,
        logger,
        progress,
        options: {
          ...options,
          siteTimeZone: settings.siteTimeZone,
          fanOutConcurrency: settings.concurrency,
          checkpointParents: 200,
          checkpointSeconds: 20,
          maxStreamMs: durationMs(settings.maxStreamDuration) ?? defaultMaxStreamMs,
          ...(pageSize === undefined ? {} : { pageSize }),
          ...reportRefreshOption(settings),
        },
      },
      streams,
    );
  } finally {
    await raw?.close();
  }
}

/** The folders a sync writes to, checked before anything is written. */
async function checkOutputDirs(settings: Settings): Promise<void> {
  if (settings.snapshot) {
    const { checkSnapshotTarget } = await import('../snapshot/index.ts');
    await checkSnapshotTarget(settings.snapshots, settings);
  }
  if (settings.report)
    checkWritableDir(settings.report, 'report directory', 'choose another one with --report or fix its permissions');
  if (settings.landRaw)
    checkWritableDir(settings.rawDir, 'raw page directory', 'choose another one with --raw-dir or fix its permissions');
}

/**
 * A snapshot write a kill or a crash cut short (folders renamed into place, the manifest not yet naming them) is
 * undone as soon as the run lock is held, not only by the next snapshot write, which a failing run never reaches:
 * until then a reader globbing the `snapshot=` folders sees folders no manifest named. Best-effort: the next snapshot
 * write tries again.
 */
async function undoKilledSnapshot(settings: Settings, logger: Logger): Promise<void> {
  const { undoKilledSnapshotWrite } = await import('../snapshot/index.ts');
  try {
    const removed = await undoKilledSnapshotWrite(
      settings.snapshots,
      `grantflow sync (pid ${process.pid})`,
      logger,
      settings,
    );
    if (removed.length > 0) logger.info({ removed }, 'removed the unpublished snapshot a killed write left');
  } catch (e) {
    logger.warn({ err: e }, 'could not remove the unpublished snapshot a killed write left; the next snapshot will');
  }
}
