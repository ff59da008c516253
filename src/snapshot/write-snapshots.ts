import { rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Warehouse } from '../warehouse/types.ts';
import { silentLogger, type Logger } from '../util/logger.ts';
import { ConfigError, firstLine, isGrantflowError, throwIfStopped } from '../util/errors.ts';
import { testPause } from '../util/test-pause.ts';
import { isObjectStoreUrl } from '../config/snapshot-location.ts';
import { checkSnapshotDir, snapshotFolder, snapshotStamp } from './snapshot-dir.ts';
import { manifestName, parseManifest, sha256File, type Manifest, type ManifestEntry } from './manifest.ts';
import type { ParquetCompression, ParquetWriter, PersonalDataChoice, ViewKeys } from './parquet-writer.ts';
import { applyRetention } from './retention.ts';
import { undoPendingSnapshot } from './pending.ts';
import { latestFolder, latestPath } from './latest.ts';
import { filePath, type SnapshotStore, type StoreLock } from './snapshot-store.ts';
import { openSnapshotStore } from './open-store.ts';

export interface SnapshotOptions {
  readonly dir: string;
  readonly runId: string;
  /** Snapshots kept per table (the newest ones); at least 1. */
  readonly retain: number;
  /** Tables to write: core tables and models. */
  readonly tables: readonly string[];
  /** Snapshot time; defaults to now. */
  readonly now?: Date;
  /** zstd by default; snappy/uncompressed exist for readers without a zstd codec. */
  readonly compression?: ParquetCompression;
  readonly logger?: Logger;
  /**
   * Aborted (a signal) to abandon the snapshot: checked between tables and before each publishing step; what was
   * written is removed and the manifest keeps the last good snapshot. Once the manifest names the new one, it stays.
   */
  readonly signal?: AbortSignal;
  /** Who writes, as the directory's writer lock names it to a writer it refuses (`grantflow snapshot`). */
  readonly command?: string;
  /** Path-style addressing when `dir` is an s3:// URL (see s3-store.ts). */
  readonly s3ForcePathStyle?: boolean;
  /**
   * Tables of `tables` this run did not change (a `sync --streams` leaves the others' tables as they were): not
   * written again while the manifest names a file of theirs that is still there and their `latest/` file exists, so
   * their manifest entry and `latest/` file stay those of the run that last wrote them.
   */
  readonly unchanged?: ReadonlySet<string>;
  /** Views among `tables`, with columns that order their rows uniquely (Postgres pages them by those). */
  readonly viewKeys?: ViewKeys;
  /** Keep each row's source JSON (`_raw`) in the files (`snapshotRaw`); left out by default. */
  readonly raw?: boolean;
  /** What the files carry of personal data (docs/privacy.md); absent: everything (`keep`). */
  readonly personalData?: PersonalDataChoice;
}

export interface TableSnapshot extends ManifestEntry {
  readonly table: string;
  readonly durationMs: number;
}

export interface SnapshotResult {
  readonly dir: string;
  readonly snapshot: string;
  readonly manifestPath: string;
  readonly tables: readonly TableSnapshot[];
  /** Tables of `unchanged` left as they were: their manifest entries still name an earlier run's files. */
  readonly kept: readonly string[];
  /** Paths removed by retention (old snapshots, stray temporary files). */
  readonly removed: readonly string[];
  readonly durationMs: number;
}

const tableNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Writes each table as `<location>/<table>/snapshot=<UTC stamp>/<table>.parquet` (zstd, DuckDB's logical types for
 * timestamps and decimals), to a folder or an object store alike (snapshot-store.ts says what differs). Each file is
 * staged where no reader of the manifest looks; only once every table is written is `_manifest.json` replaced, the one
 * commit point; then `latest/<table>.parquet` of each table written; then retention. The snapshot is noted as pending
 * (see pending.ts) from before its first file until the manifest names it, so when a kill cuts this short, the next
 * sync or write first removes what it left. All of it under the location's writer lock (writer-lock.ts,
 * bucket-lock.ts): another write under way there is refused with a LockedError (exit 1).
 */
export async function writeSnapshots(warehouse: Warehouse, options: SnapshotOptions): Promise<SnapshotResult> {
  const started = Date.now();
  const logger = options.logger ?? silentLogger;
  if (!Number.isInteger(options.retain) || options.retain < 1) {
    throw new ConfigError(`--retain must be a whole number of at least 1 (got ${options.retain})`);
  }
  // A table named twice (`--tables a,a`) is written once: a second write would collide with the first's folder.
  const tableNames = [...new Set(options.tables)];
  for (const t of tableNames) {
    if (!tableNamePattern.test(t)) throw new ConfigError(`cannot snapshot table "${t}": not a plain table name`);
    // Its folder would be the one holding every table's latest file.
    if (t === latestFolder)
      throw new ConfigError(`cannot snapshot a table named "${t}": the name of the latest folder`);
  }
  if (!isObjectStoreUrl(options.dir)) checkSnapshotDir(resolve(options.dir));
  throwIfStopped(options.signal);
  const store = await openSnapshotStore(options.dir, options);
  try {
    // One writer at a time: the pending note, retention and the manifest assume no other write is under way.
    let lock: StoreLock;
    try {
      lock = await store.lock(options.command ?? 'grantflow', logger);
    } catch (e) {
      throw store.failure({ kind: 'prepare' }, e);
    }
    try {
      return await publish(warehouse, store, options, tableNames, started, logger);
    } finally {
      await lock.release().catch((e: unknown) => {
        logger.warn({ err: firstLine(e) }, `could not remove the snapshot writer lock at ${store.where}`);
      });
    }
  } finally {
    store.close();
  }
}

/** Best-effort removal of a local temporary: a failure here must not hide the error that got us here. */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // left for the next write's retention
  }
}

/** One folder name for every table of this run; a second run within the same second gets a suffix. */
function chooseFolder(taken: ReadonlySet<string>, tables: readonly string[], stamp: string): string {
  for (let attempt = 0; ; attempt++) {
    const folder = snapshotFolder(stamp, attempt);
    if (!tables.some((t) => taken.has(`${t}/${folder}`))) return folder;
  }
}

/** The write itself, once this process is the location's only writer. */
async function publish(
  warehouse: Warehouse,
  store: SnapshotStore,
  options: SnapshotOptions,
  allTables: readonly string[],
  started: number,
  logger: Logger,
): Promise<SnapshotResult> {
  const { signal } = options;
  // One time for the folder name and every row's `_snapshot_at`.
  const snapshotAt = options.now ?? new Date();
  let removed: string[];
  let kept: string[];
  let tableNames: readonly string[];
  let folder: string;
  try {
    removed = await undoPendingSnapshot(store);
    if (removed.length > 0) logger.info({ removed: removed.length }, 'removed what a killed snapshot write left');
    removed.push(...(await store.tidy(logger)));
    const before = parseManifest(await store.readText(manifestName));
    kept = await keptTables(store, before, allTables, options.unchanged, options.personalData?.mode ?? 'keep');
    tableNames = allTables.filter((t) => !kept.includes(t));
    const taken = await store.takenFolders(tableNames);
    folder = chooseFolder(taken, tableNames, snapshotStamp(snapshotAt));
    await store.notePending({ folder, tables: tableNames });
  } catch (e) {
    throw store.failure({ kind: 'prepare' }, e);
  }
  const personalMode = options.personalData?.mode ?? 'keep';
  const written: TableSnapshot[] = [];
  /** Tables this write began to stage: what a failure removes. */
  const touched: string[] = [];
  /** Set once the manifest names this write's files: nothing of it is undone from then on. */
  let published = false;
  let writer: ParquetWriter | null = null;
  try {
    // Imported here: the writer loads DuckDB, which commands that only check a snapshot target need not.
    const { openParquetWriter } = await import('./parquet-writer.ts');
    writer = await openParquetWriter(
      warehouse,
      options.compression ?? 'zstd',
      options.viewKeys ?? {},
      { snapshotAt, raw: options.raw === true },
      options.personalData,
    );
    for (const table of tableNames) {
      throwIfStopped(signal);
      const t0 = Date.now();
      touched.push(table);
      let scratch: string | null = null;
      try {
        scratch = await store.scratchFile(table, folder);
        await writer.write(table, scratch);
        const info = await writer.inspect(scratch);
        const sha256 = await sha256File(scratch);
        const bytes = statSync(scratch).size;
        await store.stage(table, folder, scratch, signal);
        const entry: TableSnapshot = {
          table,
          path: filePath(table, folder),
          latest: latestPath(table),
          snapshot: folder.slice('snapshot='.length),
          rows: info.rows,
          bytes,
          schema: info.schema,
          sha256,
          run_id: options.runId,
          written_at: new Date().toISOString(),
          ...(personalMode !== 'keep' ? { personal_data: personalMode } : {}),
          durationMs: Date.now() - t0,
        };
        written.push(entry);
        logger.info({ table, rows: entry.rows, bytes, ms: entry.durationMs }, 'snapshot written');
      } catch (e) {
        throw store.failure({ kind: 'table', table }, e);
      } finally {
        if (scratch !== null) removeQuietly(scratch);
      }
    }
    await testPause('snapshot files staged');
    // Every table is written: the files appear where readers glob for them (a process killed before or while they
    // do leaves them pending, for the next write to remove).
    await store.placeStaged(tableNames, folder, signal);
    throwIfStopped(signal);

    const manifest: Manifest = {
      version: 1,
      updated_at: new Date().toISOString(),
      run_id: options.runId,
      tables: await mergedTables(store, written),
    };
    try {
      await store.putManifest(`${JSON.stringify(manifest, null, 2)}\n`);
    } catch (e) {
      // Replaced all the same (a folder's fsync failed after the rename, a reset reply after the store kept it):
      // readers follow the new manifest now, so its files must stay. The pending note stays until confirmed.
      const now = parseManifest(await store.readText(manifestName).catch(() => null));
      if (!namesWritten(now, written, options.runId)) throw store.failure({ kind: 'manifest' }, e);
      published = true;
      const unconfirmed = store.unconfirmed(e);
      if (unconfirmed !== null) throw unconfirmed;
    }
    published = true;
  } catch (e) {
    if (!published) await undo(store, folder, touched, logger);
    throw isGrantflowError(e) ? e : store.failure({ kind: 'write' }, e);
  } finally {
    await writer?.close();
  }
  // Published: from here on the manifest names this snapshot, so a stop no longer undoes it. Then each table's
  // latest file, after the manifest (it never holds a snapshot the manifest does not name) and before the pending
  // note goes (a kill in between leaves the note, and the next write points `latest/` at what the manifest names).
  await testPause('snapshot manifest written');
  for (const t of written) {
    try {
      await store.placeLatest(t.table, t.path);
    } catch (e) {
      throw store.failure({ kind: 'latest', table: t.table }, e);
    }
    await testPause(`snapshot latest placed ${t.table}`);
  }
  try {
    await store.clearPending();
    await testPause('snapshot published');
    for (const table of tableNames) {
      removed.push(...(await applyRetention(store, table, options.retain, folder)));
      await testPause(`snapshot retention applied ${table}`);
    }
  } catch (e) {
    // The snapshot is current; what is left over goes with the next write's retention.
    logger.warn({ err: firstLine(e) }, `snapshot published to ${store.where}, but removing old snapshots failed`);
  }
  return {
    dir: store.where,
    snapshot: folder.slice('snapshot='.length),
    manifestPath: store.manifestLocation,
    tables: written,
    kept,
    removed,
    durationMs: Date.now() - started,
  };
}

/**
 * Tables this run did not change whose manifest entry names a file still there and whose latest file exists: left as
 * they are (see SnapshotOptions.unchanged).
 */
async function keptTables(
  store: SnapshotStore,
  manifest: Manifest | null,
  tables: readonly string[],
  unchanged: ReadonlySet<string> | undefined,
  personalMode: string,
): Promise<string[]> {
  const kept: string[] = [];
  for (const t of tables) {
    const entry = manifest?.tables[t];
    if (unchanged?.has(t) !== true || entry === undefined) continue;
    // A file written under another personalData mode carries other columns: written again.
    if ((entry.personal_data ?? 'keep') !== personalMode) continue;
    if ((await store.exists(entry.path)) && (await store.exists(latestPath(t)))) kept.push(t);
  }
  return kept;
}

/** The previous manifest's entries whose files are still there (tables not in this run stay listed), then ours. */
async function mergedTables(
  store: SnapshotStore,
  written: readonly TableSnapshot[],
): Promise<Record<string, ManifestEntry>> {
  const previous = parseManifest(await store.readText(manifestName));
  const ours = new Set(written.map((t) => t.table));
  const tables: Record<string, ManifestEntry> = {};
  for (const [name, entry] of Object.entries(previous?.tables ?? {})) {
    if (ours.has(name) || (await store.exists(entry.path))) tables[name] = entry;
  }
  for (const { table, durationMs: _ms, ...entry } of written) tables[table] = entry;
  return tables;
}

/** Whether `manifest` is this run's and names the files it wrote (its replacement happened). */
function namesWritten(manifest: Manifest | null, written: readonly TableSnapshot[], runId: string): boolean {
  return manifest?.run_id === runId && written.every((t) => manifest.tables[t.table]?.path === t.path);
}

/** Removes this write's files; the pending note goes only once they are gone (else the next write retries). */
async function undo(store: SnapshotStore, folder: string, touched: readonly string[], logger: Logger): Promise<void> {
  let left = false;
  for (const table of touched) {
    try {
      await store.discard(table, folder, false);
    } catch (e) {
      left = true;
      logger.warn(
        { err: firstLine(e), table },
        'could not remove the files of a failed snapshot write; the next write will',
      );
    }
  }
  if (!left) await store.clearPending().catch(() => undefined);
}
