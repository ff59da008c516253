import { rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Warehouse } from '../warehouse/types.ts';
import type { Logger } from '../util/logger.ts';
import { firstLine, LockedError, throwIfStopped } from '../util/errors.ts';
import { processStart } from '../util/process-start.ts';
import { testPause } from '../util/test-pause.ts';
import { pidAlive } from '../util/process-alive.ts';
import { manifestName, sha256File, type Manifest, type ManifestEntry } from './manifest.ts';
import { openParquetWriter } from './parquet-writer.ts';
import { snapshotName } from './retention.ts';
import { snapshotFolder, snapshotStamp } from './snapshot-dir.ts';
import { pendingName } from './pending.ts';
import type { ObjectStore } from './object-store.ts';
import { latestPath } from './latest.ts';
import { s3Failure, S3Store } from './s3-store.ts';
import { makeUploadStaging, removeAbandonedStaging } from './upload-staging.ts';
import type { SnapshotOptions, SnapshotResult, TableSnapshot } from './write-snapshots.ts';

/**
 * Publishing a snapshot to an object store, where nothing can be renamed: each table's Parquet file is written locally
 * by DuckDB (into a temporary folder, see upload-staging.ts), uploaded to its final key
 * `<table>/snapshot=<stamp>/<table>.parquet`, and only once every file is stored is `_manifest.json` put, so a reader
 * following the manifest never meets a missing object. A note (`.snapshot-pending.tmp`, as in a folder) names the
 * snapshot from before its first upload until the manifest names it: a failed write deletes what it uploaded, and one
 * killed is undone by the next sync or write (undoInterruptedUpload, and the local folder by removeAbandonedStaging).
 * Retention deletes old snapshots only after the new manifest is in place.
 */

const parquetType = 'application/vnd.apache.parquet';
const jsonType = 'application/json';

interface PendingUpload {
  readonly folder: string;
  readonly tables: readonly string[];
  readonly host: string;
  readonly pid: number;
  readonly started?: string;
}

const tableNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

function parsePending(text: string): PendingUpload | null {
  try {
    const p = JSON.parse(text) as Partial<PendingUpload>;
    const valid =
      typeof p.folder === 'string' &&
      snapshotName.test(p.folder) &&
      Array.isArray(p.tables) &&
      p.tables.every((t) => typeof t === 'string' && tableNamePattern.test(t));
    return valid ? (p as PendingUpload) : null;
  } catch {
    return null;
  }
}

/** A note of a write still running on this machine (another process): not a killed one, so left alone. */
function heldByLiveWriter(p: PendingUpload): boolean {
  if (p.host !== hostname() || typeof p.pid !== 'number' || p.pid === process.pid || !pidAlive(p.pid)) return false;
  return p.started === undefined || processStart(p.pid) === p.started;
}

export async function readStoreManifest(store: ObjectStore): Promise<Manifest | null> {
  const text = await store.getText(manifestName);
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as Partial<Manifest>;
    return parsed.version === 1 && typeof parsed.tables === 'object' && parsed.tables !== null
      ? (parsed as Manifest)
      : null;
  } catch {
    return null;
  }
}

const filePath = (table: string, folder: string): string => `${table}/${folder}/${table}.parquet`;

/**
 * Deletes what a killed (or failed and not undone) upload left: the objects of its snapshot folder of each table the
 * manifest does not name from it, and multipart uploads left incomplete, then its note. A LockedError when a live
 * process on this machine noted it (a write under way). Returns the keys deleted.
 */
export async function undoInterruptedUpload(store: ObjectStore): Promise<string[]> {
  const text = await store.getText(pendingName);
  if (text === null) return [];
  const pending = parsePending(text);
  const removed: string[] = [];
  if (pending !== null) {
    if (heldByLiveWriter(pending)) {
      throw new LockedError(
        `snapshots at ${store.description} are being written by another grantflow process (pid ${pending.pid}); ` +
          'nothing was written or removed: retry once it has finished',
      );
    }
    const manifest = await readStoreManifest(store);
    for (const table of pending.tables) {
      if (manifest?.tables[table]?.path === filePath(table, pending.folder)) {
        // Published, and killed maybe before its latest object was copied: copied now (again).
        if (await store.exists(filePath(table, pending.folder))) {
          await store.copy(filePath(table, pending.folder), latestPath(table));
        }
        continue;
      }
      for (const key of await store.list(`${table}/${pending.folder}/`)) {
        await store.delete(key);
        removed.push(key);
      }
    }
    await store.abortIncompleteUploads();
  }
  await store.delete(pendingName);
  return removed;
}

/** One folder name for every table: a second snapshot within the same second gets a suffix. */
function chooseFolder(keys: readonly string[], tables: readonly string[], stamp: string): string {
  const taken = new Set(keys.map((k) => k.split('/').slice(0, 2).join('/')));
  for (let attempt = 0; ; attempt++) {
    const folder = snapshotFolder(stamp, attempt);
    if (!tables.some((t) => taken.has(`${t}/${folder}`))) return folder;
  }
}

/**
 * Keeps the newest `retain` snapshot folders of a table (always `current`, the one the manifest names) and deletes the
 * objects of older ones. Only keys named as grantflow names them: a shared prefix keeps everything else.
 */
async function applyStoreRetention(
  store: ObjectStore,
  table: string,
  retain: number,
  current: string,
): Promise<string[]> {
  const keys = await store.list(`${table}/`);
  const byFolder = new Map<string, string[]>();
  for (const key of keys) {
    const [, folder, file, ...rest] = key.split('/');
    if (folder === undefined || !snapshotName.test(folder) || file === undefined || rest.length > 0) continue;
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), key]);
  }
  const others = [...byFolder.keys()].filter((f) => f !== current).sort();
  const keptOthers = byFolder.has(current) ? retain - 1 : retain;
  const removed: string[] = [];
  for (const folder of others.slice(0, Math.max(0, others.length - keptOthers))) {
    for (const key of byFolder.get(folder) ?? []) {
      await store.delete(key);
      removed.push(key);
    }
  }
  return removed;
}

/** writeSnapshots to an s3:// URL; `tableNames` are validated and de-duplicated by writeSnapshots. */
export async function writeToObjectStore(
  warehouse: Warehouse,
  options: SnapshotOptions,
  tableNames: readonly string[],
  started: number,
  logger: Logger,
): Promise<SnapshotResult> {
  throwIfStopped(options.signal);
  const store = S3Store.open(options.dir, { forcePathStyle: options.s3ForcePathStyle });
  try {
    return await writeSnapshotsToStore(warehouse, store, options, tableNames, started, logger);
  } finally {
    store.close();
  }
}

/** The write itself, to any object store. */
export async function writeSnapshotsToStore(
  warehouse: Warehouse,
  store: ObjectStore,
  options: SnapshotOptions,
  allTables: readonly string[],
  started: number,
  logger: Logger,
): Promise<SnapshotResult> {
  let tableNames = allTables;
  const { signal } = options;
  const where = store.description;
  let removed: string[];
  let folder: string;
  let kept: string[];
  try {
    removed = await undoInterruptedUpload(store);
    if (removed.length > 0) logger.info({ removed: removed.length }, 'removed the objects of an interrupted upload');
    const abandoned = removeAbandonedStaging();
    if (abandoned.length > 0) logger.info({ folders: abandoned }, 'removed the local files of a killed upload');
    const keys = await store.list('');
    kept = await keptTables(store, keys, tableNames, options.unchanged);
    tableNames = tableNames.filter((t) => !kept.includes(t));
    folder = chooseFolder(keys, tableNames, snapshotStamp(options.now ?? new Date()));
    const note: PendingUpload = {
      folder,
      tables: tableNames,
      host: hostname(),
      pid: process.pid,
      started: processStart(process.pid),
    };
    await store.putText(pendingName, JSON.stringify(note), jsonType);
  } catch (e) {
    throw s3Failure(`could not prepare the snapshot at ${where}`, e);
  }
  const temp = makeUploadStaging();
  const written: TableSnapshot[] = [];
  const uploaded: string[] = [];
  let published = false;
  let writer: Awaited<ReturnType<typeof openParquetWriter>> | null = null;
  try {
    writer = await openParquetWriter(warehouse, options.compression ?? 'zstd', options.viewKeys);
    for (const table of tableNames) {
      throwIfStopped(signal);
      const t0 = Date.now();
      const local = join(temp, `${table}.parquet`);
      const key = filePath(table, folder);
      try {
        await writer.write(table, local);
        const info = await writer.inspect(local);
        const sha256 = await sha256File(local);
        const bytes = statSync(local).size;
        uploaded.push(key);
        await store.putFile(key, local, parquetType, signal);
        const { snapshot, run_id } = { snapshot: folder.slice('snapshot='.length), run_id: options.runId };
        const entry: TableSnapshot = {
          table,
          path: key,
          latest: latestPath(table),
          snapshot,
          rows: info.rows,
          bytes,
          schema: info.schema,
          sha256,
          run_id,
          written_at: new Date().toISOString(),
          durationMs: Date.now() - t0,
        };
        written.push(entry);
        logger.info({ table, rows: entry.rows, bytes, ms: entry.durationMs }, 'snapshot uploaded');
      } catch (e) {
        throw s3Failure(`could not write the snapshot of ${table} to ${where}`, e);
      } finally {
        rmSync(local, { force: true });
      }
      await testPause(`snapshot uploaded ${table}`);
    }
    throwIfStopped(signal);

    const manifest: Manifest = {
      version: 1,
      updated_at: new Date().toISOString(),
      run_id: options.runId,
      tables: await mergedTables(store, written),
    };
    try {
      await store.putText(manifestName, `${JSON.stringify(manifest, null, 2)}\n`, jsonType);
    } catch (e) {
      // The request may have failed after the store kept it (a reset reply): then the snapshot is published.
      const now = await readStoreManifest(store).catch(() => null);
      if (now?.run_id !== options.runId || !written.every((t) => now.tables[t.table]?.path === t.path)) throw e;
    }
    published = true;
  } catch (e) {
    if (!published) await undoUpload(store, uploaded, logger);
    throw s3Failure(`could not write the snapshot to ${where}`, e);
  } finally {
    await writer?.close();
    rmSync(temp, { recursive: true, force: true });
  }
  // Published: from here on the manifest names this snapshot, so a stop no longer undoes it. Then each table's
  // latest object, after the manifest (it never holds a snapshot the manifest does not name) and before the note goes
  // (a kill in between leaves the note, and the next write copies what the manifest names).
  await testPause('snapshot manifest written');
  for (const t of written) {
    try {
      await store.copy(t.path, latestPath(t.table));
    } catch (e) {
      throw s3Failure(
        `the snapshot was published to ${where} (the manifest names it) but its latest object of ${t.table} could ` +
          'not be written; the next sync or snapshot brings latest/ in line with the manifest',
        e,
      );
    }
    await testPause(`snapshot latest placed ${t.table}`);
  }
  try {
    await store.delete(pendingName);
    await testPause('snapshot published');
    for (const table of tableNames) {
      removed.push(...(await applyStoreRetention(store, table, options.retain, folder)));
      await testPause(`snapshot retention applied ${table}`);
    }
  } catch (e) {
    // The snapshot is current; what is left over goes with the next write's retention.
    logger.warn({ err: firstLine(e) }, `snapshot published to ${where}, but removing old snapshots failed`);
  }
  return {
    dir: where,
    snapshot: folder.slice('snapshot='.length),
    manifestPath: `${where}/${manifestName}`,
    tables: written,
    kept,
    removed,
    durationMs: Date.now() - started,
  };
}

/** The previous manifest's entries whose objects are still there (tables not in this run stay listed), then ours. */
async function mergedTables(
  store: ObjectStore,
  written: readonly TableSnapshot[],
): Promise<Record<string, ManifestEntry>> {
  const previous = await readStoreManifest(store);
  const tables: Record<string, ManifestEntry> = {};
  const ours = new Set(written.map((t) => t.table));
  for (const [name, entry] of Object.entries(previous?.tables ?? {})) {
    if (!ours.has(name) && (await store.exists(entry.path))) tables[name] = entry;
  }
  for (const { table, durationMs: _ms, ...entry } of written) tables[table] = entry;
  return tables;
}

/**
 * Tables this run did not change whose manifest entry names an object still there and whose latest object exists:
 * left as they are (see SnapshotOptions.unchanged).
 */
async function keptTables(
  store: ObjectStore,
  keys: readonly string[],
  tables: readonly string[],
  unchanged: ReadonlySet<string> | undefined,
): Promise<string[]> {
  if (unchanged === undefined || unchanged.size === 0) return [];
  const present = new Set(keys);
  const manifest = await readStoreManifest(store);
  return tables.filter((t) => {
    const entry = manifest?.tables[t];
    return unchanged.has(t) && entry !== undefined && present.has(entry.path) && present.has(latestPath(t));
  });
}

/** Deletes this write's objects; the note goes only once they are gone (else the next write retries). */
async function undoUpload(store: ObjectStore, uploaded: readonly string[], logger: Logger): Promise<void> {
  try {
    for (const key of uploaded) await store.delete(key);
    await store.delete(pendingName);
  } catch (e) {
    logger.warn({ err: firstLine(e) }, 'could not delete the objects of a failed upload; the next snapshot write will');
  }
}
