import { selectStreams, runExtract } from '../extract/extract-run.ts';
import { Mutex } from '../extract/mutex.ts';
import { Progress } from '../extract/progress.ts';
import { RawLanding } from '../extract/raw-landing.ts';
import type { StreamInfo } from '../extract/types.ts';
import { tables } from '../normalize/index.ts';
import { createSiteClient } from '../source/index.ts';
import type { ClientStats, Credentials, CredentialStore, SiteClient } from '../source/types.ts';
import type { Settings } from '../config/settings.ts';
import { isNewDuckDBFile, openConfiguredWarehouse, warehouseMayHoldCredentials } from '../warehouse/index.ts';
import type { RunRecord, Warehouse } from '../warehouse/types.ts';
import type { LockWait } from '../warehouse/postgres/lock-wait.ts';
import {
  ConfigError,
  CredentialsError,
  ExitCode,
  firstLine,
  GrantflowError,
  StoppedError,
  stopReason,
} from '../util/errors.ts';
import { redact } from '../util/redact.ts';
import type { Logger } from '../util/logger.ts';
import { isJsonObject, type JsonValue } from '../util/json.ts';
import {
  credentialsFromEnv,
  envCredentials,
  fileCredentialStore,
  FirstRunCredentialStore,
  WarehouseCredentialStore,
} from './credentials.ts';
import { preflight, probeConnect } from './preflight.ts';
import { newRunId } from './run-id.ts';
import { afterLoad, type AfterLoadInfo } from './after-load.ts';
import { modelTableNames } from '../models/index.ts';
import { dirname, join, resolve } from 'node:path';
import { checkWritableDir } from '../util/writable-dir.ts';
import { testPause } from '../util/test-pause.ts';
import { checkWarehouseSite, siteOfRun } from './warehouse-site.ts';
import { reportRefreshOption } from '../extract/report-refresh.ts';

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
}

export interface SyncResult {
  readonly runId: string;
  readonly status: 'succeeded' | 'partial' | 'failed' | 'interrupted';
  readonly resumed: boolean;
  readonly streams: readonly StreamInfo[];
  readonly client: ClientStats;
  readonly after: AfterLoadInfo | null;
  readonly durationMs: number;
  readonly exitCode: number;
}

/**
 * A sync that stopped before it finished (a signal, or credentials rejected mid-run): its run is recorded (failed or
 * interrupted, resumable), `result` reports the streams it committed, and the error's code is the exit code.
 */
export class SyncStoppedError extends GrantflowError {
  constructor(
    message: string,
    exitCode: ExitCode,
    readonly result: SyncResult,
  ) {
    super(message, exitCode, 'stopped');
  }
}

/**
 * One sync: validate everything that can be validated before writing (settings, streams, credentials, snapshot
 * directory, the site itself), then lock the warehouse, extract and load every stream, run models and data tests,
 * write snapshots, and record the run. A run that was killed is resumed under its own run id.
 */
export async function runSync(request: SyncRequest): Promise<SyncResult> {
  const { settings, logger } = request;
  const env = request.env ?? process.env;
  const started = Date.now();
  if (!settings.site)
    throw new ConfigError('no site: pass --site URL (or GRANTFLOW_SITE, or "site" in the pipeline file)');
  const site = settings.site.replace(/\/+$/, '');
  const streams = selectStreams(settings.streams ?? null);
  const useEnv = credentialsFromEnv(env);
  const fileStore = useEnv ? null : await fileCredentialStore(settings.credentials);
  const envCreds = useEnv ? envCredentials(env) : null;
  if (settings.snapshot) await checkSnapshots(settings.snapshots);
  if (settings.landRaw)
    checkWritableDir(settings.rawDir, 'raw page directory', 'choose another one with --raw-dir or fix its permissions');

  // Stopped by the caller (a signal) or by a stream meeting credentials rejected for good.
  const stop = new AbortController();
  const stopFromCaller = (): void => stop.abort(request.signal?.reason);
  if (request.signal?.aborted) stopFromCaller();
  request.signal?.addEventListener('abort', stopFromCaller, { once: true });
  /** Before the run is recorded, a stop is just the error that stopped it: nothing needs resuming yet. */
  const stopError = (error: unknown): unknown =>
    stop.signal.aborted && error instanceof StoppedError ? stopReason(stop.signal) : error;
  const throwIfStopped = (): void => {
    if (stop.signal.aborted) throw stopReason(stop.signal);
  };

  let client: SiteClient | null = null;
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

  // With credentials from GRANTFLOW_* variables the full preflight needs the warehouse (it may hold a newer rotated
  // pair than the variables, and a refresh must be saved there before anything else), so it runs after opening it;
  // a bare connect to the site needs no credentials, and a --site where nothing answers then writes nothing either.
  // On a first run (no DuckDB file yet, or a Postgres schema holding no pair for the site) there is no newer pair, so
  // the variables' pair is checked before the file or any table is created; a rotation meanwhile proves it good, and
  // the FirstRunCredentialStore creates the warehouse to keep the new pair before the check goes on.
  let firstRun: FirstRunCredentialStore | null = null;
  if (!fileStore) {
    await probeConnect(site);
    // A site that moved, or whose address is spelt otherwise (see checkWarehouseSite), may find its pair stored for
    // the address of the last run (carried over below, once the warehouse is open).
    if (!(await warehouseMayHoldCredentials(settings, null, logger))) {
      if (isNewDuckDBFile(settings.warehouse))
        checkWritableDir(dirname(resolve(settings.warehouse)), 'warehouse directory', 'choose another --warehouse');
      firstRun = new FirstRunCredentialStore(
        envCreds!,
        (pair) => keepFirstRotation(settings, site, envCreds!, pair, logger),
        () => pairStoredMeanwhile(settings, site, envCreds!, logger),
        logger,
      );
    }
  }

  // With a credentials file (or the variables on a first run) the site is checked before the warehouse is even
  // opened: a wrong site or secret writes nothing.
  const earlyStore = fileStore ?? firstRun;
  if (earlyStore) {
    client = makeClient(earlyStore);
    await preflight(client).catch(async (e: unknown) => {
      await client?.close();
      throw stopError(e);
    });
  }

  let warehouse: Warehouse;
  try {
    // A stop ends a wait for another session's table lock too (within one attempt), not only new requests.
    warehouse = await openConfiguredWarehouse(settings, logger, {
      stop: stop.signal,
      // Their rebuild replaces them: one another role owns is refused now, not after the load and the models before it.
      ...(settings.models ? { models: modelTableNames() } : {}),
      ...(request.loadLockWait ? { loadLockWait: request.loadLockWait } : {}),
    });
  } catch (error) {
    await client?.close();
    throw error;
  }
  try {
    await warehouse.acquireLock(`grantflow sync (pid ${process.pid})`);
    if (settings.snapshot) await undoKilledSnapshot(settings.snapshots, logger);
    await warehouse.migrate(tables);
    // Before anything of this run is written (a credential pair, the run's row): another site's warehouse is refused.
    const last = (await warehouse.listRuns(1))[0];
    checkWarehouseSite(last, site, settings.siteMoved, warehouse.description);
    // The variables' pair is used up by the rotations stored for the last run's address: a site that moved (or the
    // same address spelt otherwise, which the check accepts without --site-moved) goes on from those.
    const held = siteOfRun(last);
    if (envCreds && held !== undefined && held !== site) await carryCredentials(warehouse, held, site);
    // A first run's client is already checked: only its store moves into the warehouse.
    if (firstRun) await firstRun.attach(new WarehouseCredentialStore(warehouse, site, envCreds!, logger));
    if (!client) {
      client = makeClient(new WarehouseCredentialStore(warehouse, site, envCreds!, logger));
      await preflight(client).catch((e: unknown) => {
        throw stopError(e);
      });
    }
    throwIfStopped();
    const siteClient = client;

    const resumed = last !== undefined && resumable(last);
    const runId = resumed && last ? last.runId : newRunId();
    const startedAt = resumed && last ? last.startedAt : new Date(started).toISOString();
    // A resumed run keeps the intent it started with: a --full-refresh killed halfway and resumed by a plain sync must
    // still read every parent's children, or child edits only a full refresh sees are missed; but only for the streams
    // that run selected (a record from before the selection was kept: the streams of this sync).
    const selected = streams.map((d) => d.name);
    const stored = resumed ? runOptionsOf(last?.summary) : {};
    const fullRefreshStreams = new Set([
      ...(settings.fullRefresh ? selected : []),
      ...(stored.fullRefresh ? (stored.fullRefreshStreams ?? selected) : []),
    ]);
    const fullRefresh = fullRefreshStreams.size > 0;
    const options = { fullRefresh, fullRefreshStreams: [...fullRefreshStreams] } satisfies RunOptions;
    if (resumed) logger.warn({ runId, fullRefresh }, 'the previous run did not finish: resuming it');
    await warehouse.saveRun({ runId, startedAt, status: 'running', summary: { site, options } });

    const raw = settings.landRaw ? new RawLanding(join(settings.rawDir, runId)) : null;
    await raw?.open();
    const progress = new Progress(logger, request.tty);
    let infos: StreamInfo[];
    try {
      infos = await runExtract(
        {
          client: siteClient,
          warehouse,
          mutex: new Mutex(),
          raw,
          runId,
          extractedAt: new Date().toISOString(),
          resuming: resumed,
          stop,
          logger,
          progress,
          options: {
            fullRefreshStreams,
            fullRefreshAfterDays: settings.fullRefreshAfterDays,
            siteTimeZone: settings.siteTimeZone,
            fanOutConcurrency: settings.concurrency,
            checkpointParents: 200,
            checkpointSeconds: 20,
            ...reportRefreshOption(settings),
          },
        },
        streams,
      );
    } finally {
      await raw?.close();
    }

    /** What the run reports, and its record of how it ended. */
    const ending = (status: SyncResult['status'], after: AfterLoadInfo | null, exitCode: ExitCode) => {
      const durationMs = Date.now() - started;
      const result: SyncResult = {
        runId,
        status,
        resumed,
        streams: infos,
        client: { ...siteClient.stats },
        after,
        durationMs,
        exitCode,
      };
      const record = (extra: Record<string, unknown>): Promise<void> =>
        warehouse.saveRun({
          runId,
          startedAt,
          finishedAt: new Date().toISOString(),
          status,
          summary: JSON.parse(
            JSON.stringify({ site, streams: infos, client: siteClient.stats, durationMs, options, ...extra }),
          ) as JsonValue,
        });
      return { result, record };
    };

    /** Records how the run ended and what it reports. */
    const finish = async (
      status: SyncResult['status'],
      after: AfterLoadInfo | null,
      exitCode: ExitCode,
      extra: Record<string, unknown>,
    ): Promise<SyncResult> => {
      const { result, record } = ending(status, after, exitCode);
      await record(extra);
      return result;
    };

    /**
     * Stopped: what was committed stays, the run is recorded with why (never a secret), and the next sync resumes it.
     * Credentials rejected for good are a configuration problem (exit 2: a person must issue new ones). Only the
     * caller's stop (a signal) is an interruption; a stream's error that ended the run is a failure. A record that
     * cannot be written (a lock held past its short wait after a stop) is said, and the run still ends as stopped.
     */
    const stopped = async (after: AfterLoadInfo | null): Promise<never> => {
      const reason = stopReason(stop.signal);
      const interrupted = request.signal?.aborted === true && stop.signal.reason === request.signal.reason;
      const credentials = reason instanceof CredentialsError;
      const error = redact(reason.message);
      const exitCode = credentials ? ExitCode.usage : ExitCode.runFailed;
      const status = interrupted ? 'interrupted' : 'failed';
      const { result, record } = ending(status, after, exitCode);
      let unrecorded = '';
      try {
        await record({ error, resumable: true, ...(after ? { after: after.summary } : {}) });
      } catch (e) {
        if (!(e instanceof GrantflowError)) throw e;
        // Its row still says `running` (status reports it as killed), which the next sync resumes all the same.
        unrecorded = `; the run could not be recorded as ${status}, so its record says running until then (${firstLine(e)})`;
      }
      throw new SyncStoppedError(
        `${error}; the streams committed before are kept and the next sync resumes run ${runId}${unrecorded}`,
        exitCode,
        result,
      );
    };

    await testPause('sync extraction finished');
    // A stop (during the extraction or since) starts nothing further: no model, data test or snapshot (see afterLoad).
    if (stop.signal.aborted) await stopped(null);
    const failed = infos.some((i) => i.status === 'failed');
    // Models and analysts query next; loads took no statistics (see refreshStatistics).
    await warehouse.refreshStatistics();
    const after = await afterLoad(warehouse, settings, runId, failed, logger, stop.signal);
    if (after.stopped) await stopped(after);
    const succeeded = !failed && !after.failed;
    return await finish(succeeded ? 'succeeded' : 'partial', after, succeeded ? ExitCode.ok : ExitCode.runFailed, {
      after: after.summary,
    });
  } finally {
    request.signal?.removeEventListener('abort', stopFromCaller);
    await client?.close();
    await warehouse.close();
  }
}

/**
 * A run to continue rather than start afresh: one that died (still `running`), one stopped by a signal, or one
 * stopped by credentials rejected mid-run (`failed`, marked resumable): their committed work is not fetched again.
 */
function resumable(run: RunRecord): boolean {
  if (run.status === 'running' || run.status === 'interrupted') return true;
  return run.status === 'failed' && isJsonObject(run.summary) && run.summary.resumable === true;
}

/**
 * The pair stored for a site's old address, stored for its new one too unless that holds a pair written since (an
 * attempt killed after it rotated the copy there). One written before is dead: copied by an attempt that failed, after
 * which runs at the old address rotated on.
 */
async function carryCredentials(warehouse: Warehouse, from: string, to: string): Promise<void> {
  const pair = await warehouse.readCredentials(from);
  if (!pair) return;
  const newer = await warehouse.query(
    `SELECT 1 AS newer FROM _grantflow_credentials n, _grantflow_credentials o
      WHERE n.site = $1 AND o.site = $2 AND n.updated_at >= o.updated_at`,
    [to, from],
  );
  if (newer.length === 0) await warehouse.writeCredentials(to, pair);
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
    // A DuckDB file is locked while open: the note names this run to another refused meanwhile (a Postgres run lock
    // here could be refused, and lose the pair).
    if (warehouse.dialect === 'duckdb') await warehouse.acquireLock(`grantflow sync (pid ${process.pid})`);
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

/** What a run was asked to do that a resume must do too; kept in its `_grantflow_runs` row (summary.options). */
interface RunOptions {
  readonly fullRefresh: boolean;
  /** The streams the full refresh covers: those the run selected. */
  readonly fullRefreshStreams?: readonly string[];
}

function runOptionsOf(summary: JsonValue | undefined): Partial<RunOptions> {
  const options = isJsonObject(summary) ? summary.options : undefined;
  if (!isJsonObject(options) || typeof options.fullRefresh !== 'boolean') return {};
  const names = options.fullRefreshStreams;
  const fullRefreshStreams =
    Array.isArray(names) && names.every((n) => typeof n === 'string') ? (names as string[]) : undefined;
  return { fullRefresh: options.fullRefresh, ...(fullRefreshStreams ? { fullRefreshStreams } : {}) };
}

/**
 * A snapshot write a kill or a crash cut short (folders renamed into place, the manifest not yet naming them) is
 * undone as soon as the run lock is held, not only by the next snapshot write, which a failing run never reaches:
 * until then a reader globbing the `snapshot=` folders sees folders no manifest named. Best-effort: the next snapshot
 * write tries again.
 */
async function undoKilledSnapshot(dir: string, logger: Logger): Promise<void> {
  const { undoKilledWrite } = await import('../snapshot/index.ts');
  try {
    const removed = undoKilledWrite(dir, `grantflow sync (pid ${process.pid})`, logger);
    if (removed.length > 0) logger.info({ removed }, 'removed the unpublished snapshot a killed write left');
  } catch (e) {
    logger.warn({ err: e }, 'could not remove the unpublished snapshot a killed write left; the next snapshot will');
  }
}

async function checkSnapshots(dir: string): Promise<void> {
  const { checkSnapshotDir } = await import('../snapshot/index.ts');
  await checkSnapshotDir(dir);
}
