import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Warehouse } from '../warehouse/types.ts';
import { silentLogger, type Logger } from '../util/logger.ts';
import {
  ConfigError,
  ExitCode,
  firstLine,
  GrantflowError,
  isGrantflowError,
  LockedError,
  throwIfStopped,
} from '../util/errors.ts';
import { testPause } from '../util/test-pause.ts';
import { checkSnapshotDir, hiddenFolder, snapshotFolder, snapshotStamp, tempFile } from './snapshot-dir.ts';
import { manifestName, readManifest, sha256File, writeManifest, type ManifestEntry } from './manifest.ts';
import type { ParquetCompression, ParquetWriter, ViewKeys } from './parquet-writer.ts';
import { applyRetention, removeStrayManifestTemps } from './retention.ts';
import { clearPending, notePending, pendingNoted, undoPendingSnapshot } from './pending.ts';
import { pathProblem } from '../util/path-problem.ts';
import { fsyncFile, mkdirDurable, removeDurable, renameDurable } from '../util/durable-file.ts';
import { takeWriterLock } from './writer-lock.ts';
import { isObjectStoreUrl } from '../config/snapshot-location.ts';
import { hasLatest, latestFolder, latestPath, placeLatest, removeStrayLatestTemps } from './latest.ts';

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
 * A file system or DuckDB error while writing (a full disk, a file where a folder goes) is the run's failure with a
 * message naming what could not be written, not a bug; our own errors (a missing table) pass through.
 */
function snapshotError(what: string, e: unknown, path?: string): GrantflowError {
  if (isGrantflowError(e)) return e;
  // A file system error under `path` in words (naming a file in the way); anything else by its first line.
  const why =
    path === undefined || (e as NodeJS.ErrnoException).code === undefined ? firstLine(e) : pathProblem(e, path);
  return new GrantflowError(
    `could not write ${what}: ${why}; the manifest still names the last good snapshot`,
    ExitCode.runFailed,
    'snapshot_failed',
    { cause: e },
  );
}

/**
 * Best-effort cleanup of a temporary: a failure here must not hide the error that got us here (retention retries).
 * `durable`: the removal is on the disk before the pending note goes, so a crash cannot bring back a folder without
 * the note that says to remove it.
 */
function removeQuietly(path: string, durable = false): boolean {
  try {
    if (durable) removeDurable(path);
    else rmSync(path, { recursive: true, force: true });
    return true;
  } catch {
    return false; // left for the next write to remove
  }
}

/** One folder name for every table of this run; a second run within the same second gets a suffix. */
function chooseFolder(dir: string, tables: readonly string[], stamp: string): string {
  for (let attempt = 0; ; attempt++) {
    const folder = snapshotFolder(stamp, attempt);
    if (!tables.some((t) => existsSync(join(dir, t, folder)))) return folder;
  }
}

/**
 * Writes each table as `<dir>/<table>/snapshot=<UTC stamp>/<table>.parquet` (zstd, DuckDB's logical types for
 * timestamps and decimals). Each file is written under a temporary name that does not end in `.parquet` and moved
 * into a hidden temporary folder; only once every table is written are those folders renamed into place, so a reader
 * never sees a partial file or an empty snapshot folder, and a failure leaves no new `snapshot=` folder at all (a
 * reader globbing the folders would otherwise take a set the manifest never named). Then the manifest (temp +
 * rename); then retention. The snapshot is noted as pending (see pending.ts) from before its first file until the
 * manifest names it, so when a kill cuts this short, the next sync or write first removes what it left. Each step is
 * fsynced before the next (durable-file.ts), so a power cut or OS crash leaves what a kill at that step would. All of
 * it under the directory's writer lock (writer-lock.ts): another write under way there is refused with a LockedError
 * (exit 1).
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
  if (isObjectStoreUrl(options.dir)) {
    // Loaded only for an s3:// location (the AWS SDK): see snapshot-target.ts.
    const { writeToObjectStore } = await import('./store-publish.ts');
    return writeToObjectStore(warehouse, options, tableNames, started, logger);
  }
  const dir = resolve(options.dir);
  checkSnapshotDir(dir);
  throwIfStopped(options.signal);
  // One writer at a time: the pending note, retention and the manifest assume no other write is under way.
  let lock: ReturnType<typeof takeWriterLock>;
  try {
    mkdirDurable(dir);
    lock = takeWriterLock(dir, options.command ?? 'grantflow', logger);
  } catch (e) {
    throw snapshotError(`the snapshot directory ${dir}`, e);
  }
  try {
    return await writeLocked(warehouse, options, dir, tableNames, started, logger);
  } finally {
    lock.release();
  }
}

/**
 * Undoes what a killed or crashed write left unpublished (see pending.ts), under the writer lock: a write still under
 * way in `dir` (another warehouse's, sharing the directory) is not a killed one, and is left alone. Returns the paths
 * removed; nothing when no note is pending or another writer holds the directory (its own next step cleans up).
 */
export function undoKilledWrite(dir: string, command: string, logger: Logger = silentLogger): string[] {
  const full = resolve(dir);
  if (!pendingNoted(full)) return [];
  let lock: ReturnType<typeof takeWriterLock>;
  try {
    lock = takeWriterLock(full, command, logger);
  } catch (e) {
    if (e instanceof LockedError) return [];
    throw e;
  }
  try {
    return undoPendingSnapshot(full);
  } finally {
    lock.release();
  }
}

/** The write itself, once this process is the directory's only writer. */
async function writeLocked(
  warehouse: Warehouse,
  options: SnapshotOptions,
  dir: string,
  allTables: readonly string[],
  started: number,
  logger: Logger,
): Promise<SnapshotResult> {
  let tableNames = allTables;
  const { signal } = options;
  const removed = undoPendingSnapshot(dir);
  removed.push(...removeStrayLatestTemps(dir));
  const before = readManifest(dir);
  const kept = tableNames.filter((t) => {
    const entry = before?.tables[t];
    return (
      options.unchanged?.has(t) === true &&
      entry !== undefined &&
      existsSync(join(dir, entry.path)) &&
      hasLatest(dir, t)
    );
  });
  tableNames = tableNames.filter((t) => !kept.includes(t));
  const now = options.now ?? new Date();
  const folder = chooseFolder(dir, tableNames, snapshotStamp(now));
  try {
    notePending(dir, { folder, tables: tableNames });
  } catch (e) {
    throw snapshotError(`the snapshot directory ${dir}`, e);
  }
  const written: TableSnapshot[] = [];
  /** Hidden folders holding a finished file, and the folders already renamed into place: undone on failure. */
  const staged: { readonly table: string; readonly from: string; readonly to: string }[] = [];
  const placed: string[] = [];
  /** Removes this write's folders; the pending note goes only once they are gone (else the next write retries). */
  const undo = (): void => {
    const gone = [...staged.map((s) => s.from), ...placed].map((path) => removeQuietly(path, true));
    if (gone.every(Boolean)) clearPending(dir);
  };
  /** Set once the manifest names this write's folders: nothing of it is undone from then on. */
  let published = false;
  let writer: ParquetWriter | null = null;
  try {
    // Imported here: the writer loads DuckDB, which commands that only check a snapshot target need not.
    const { openParquetWriter } = await import('./parquet-writer.ts');
    writer = await openParquetWriter(warehouse, options.compression ?? 'zstd', options.viewKeys);
    for (const table of tableNames) {
      throwIfStopped(signal);
      const t0 = Date.now();
      const tableDir = join(dir, table);
      const temp = join(tableDir, tempFile(table, folder));
      const hidden = join(tableDir, hiddenFolder(folder));
      try {
        mkdirDurable(tableDir);
        await writer.write(table, temp);
        const info = await writer.inspect(temp);
        const sha256 = await sha256File(temp);
        const bytes = statSync(temp).size;
        mkdirSync(hidden, { recursive: true });
        staged.push({ table, from: hidden, to: join(tableDir, folder) });
        // On the disk before its name is: a crash must not leave the manifest naming a torn file.
        fsyncFile(temp);
        renameDurable(temp, join(hidden, `${table}.parquet`));
        const entry: TableSnapshot = {
          table,
          path: `${table}/${folder}/${table}.parquet`,
          latest: latestPath(table),
          snapshot: folder.slice('snapshot='.length),
          rows: info.rows,
          bytes,
          schema: info.schema,
          sha256,
          run_id: options.runId,
          written_at: new Date().toISOString(),
          durationMs: Date.now() - t0,
        };
        written.push(entry);
        logger.info({ table, rows: entry.rows, bytes, ms: entry.durationMs }, 'snapshot written');
      } catch (e) {
        throw snapshotError(`the snapshot of ${table} in ${tableDir}`, e, tableDir);
      } finally {
        removeQuietly(temp);
      }
    }
    await testPause('snapshot files staged');
    // Every table is written: the folders appear now, one rename each, each with its file (a process killed before
    // or between them leaves them pending, for the next write to remove).
    for (const { table, from, to } of staged) {
      throwIfStopped(signal);
      try {
        renameDurable(from, to);
      } catch (e) {
        // Renamed, but its folder's fsync failed: the folder is in place all the same, and goes with the rest.
        if (existsSync(to)) placed.push(to);
        throw snapshotError(`the snapshot folder ${to}`, e);
      }
      placed.push(to);
      await testPause(`snapshot folder placed ${table}`);
    }
    throwIfStopped(signal);

    const previous = readManifest(dir);
    const tables: Record<string, ManifestEntry> = {};
    for (const [name, entry] of Object.entries(previous?.tables ?? {})) {
      if (existsSync(join(dir, entry.path))) tables[name] = entry;
    }
    for (const { table, durationMs: _ms, ...entry } of written) tables[table] = entry;
    try {
      writeManifest(dir, { version: 1, updated_at: new Date().toISOString(), run_id: options.runId, tables });
    } catch (e) {
      // Renamed, but the folder's fsync failed: readers follow the new manifest now, so its folders must stay. The
      // pending note stays too: should a crash take the rename back, the next sync removes them (see pending.ts).
      if (namesFolder(readManifest(dir), written, folder)) {
        published = true;
        throw new GrantflowError(
          `the snapshot was published (the manifest in ${dir} names it) but the disk did not confirm it: ` +
            `${firstLine(e)}; check the disk before the next run`,
          ExitCode.runFailed,
          'snapshot_failed',
          { cause: e },
        );
      }
      // The manifest still names the last good set: this run's folders go, as when a table fails.
      throw snapshotError(`the manifest in ${dir}`, e);
    }
  } catch (e) {
    if (!published) undo();
    throw e;
  } finally {
    await writer?.close();
  }
  // Published: from here on the manifest names this snapshot, so a stop no longer undoes it. Then each table's
  // latest file, after the manifest (it never holds a snapshot the manifest does not name) and before the pending
  // note goes (a kill in between leaves the note, and the next write points `latest/` at what the manifest names).
  await testPause('snapshot manifest written');
  for (const t of written) {
    try {
      placeLatest(dir, t.table, t.path);
    } catch (e) {
      const where = join(dir, latestFolder);
      throw new GrantflowError(
        `the snapshot was published (the manifest in ${dir} names it) but the latest file of ${t.table} could not ` +
          `be written: ${(e as NodeJS.ErrnoException).code === undefined ? firstLine(e) : pathProblem(e, where)}; ` +
          'the next sync or snapshot brings latest/ in line with the manifest',
        ExitCode.runFailed,
        'snapshot_failed',
        { cause: e },
      );
    }
    await testPause(`snapshot latest placed ${t.table}`);
  }
  clearPending(dir);
  await testPause('snapshot published');

  removed.push(...removeStrayManifestTemps(dir));
  for (const table of tableNames) {
    removed.push(...applyRetention(dir, table, options.retain, folder));
    await testPause(`snapshot retention applied ${table}`);
  }
  return {
    dir,
    snapshot: folder.slice('snapshot='.length),
    manifestPath: join(dir, manifestName),
    tables: written,
    kept,
    removed,
    durationMs: Date.now() - started,
  };
}

/** Whether `manifest` names the files this write put in `folder` (its rename happened). */
function namesFolder(manifest: ReturnType<typeof readManifest>, written: readonly TableSnapshot[], folder: string) {
  return (
    written.length > 0 &&
    written.every((t) => manifest?.tables[t.table]?.path === `${t.table}/${folder}/${t.table}.parquet`)
  );
}
