import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Warehouse } from '../warehouse/types.ts';
import { silentLogger, type Logger } from '../util/logger.ts';
import { ConfigError, ExitCode, firstLine, GrantflowError, isGrantflowError } from '../util/errors.ts';
import { checkSnapshotDir, snapshotFolder, snapshotStamp, tempSuffix } from './snapshot-dir.ts';
import { manifestName, readManifest, sha256File, writeManifest, type ManifestEntry } from './manifest.ts';
import { openParquetWriter, type ParquetCompression } from './parquet-writer.ts';
import { applyRetention, removeStrayManifestTemps } from './retention.ts';

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
  /** Paths removed by retention (old snapshots, stray temporary files). */
  readonly removed: readonly string[];
  readonly durationMs: number;
}

const tableNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A file system or DuckDB error while writing (a full disk, a file where a folder goes) is the run's failure with a
 * message naming what could not be written, not a bug; our own errors (a missing table) pass through.
 */
function snapshotError(what: string, e: unknown): GrantflowError {
  if (isGrantflowError(e)) return e;
  return new GrantflowError(
    `could not write ${what}: ${firstLine(e)}; the manifest still names the last good snapshot`,
    ExitCode.runFailed,
    'snapshot_failed',
    { cause: e },
  );
}

/** Best-effort cleanup of a temporary: a failure here must not hide the error that got us here (retention retries). */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // left for retention to remove
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
 * rename); then retention.
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
  }
  const dir = resolve(options.dir);
  checkSnapshotDir(dir);
  const now = options.now ?? new Date();
  const folder = chooseFolder(dir, tableNames, snapshotStamp(now));
  const writer = await openParquetWriter(warehouse, options.compression ?? 'zstd');
  const written: TableSnapshot[] = [];
  /** Hidden folders holding a finished file, and the folders already renamed into place: undone on failure. */
  const staged: { readonly from: string; readonly to: string }[] = [];
  const placed: string[] = [];
  try {
    for (const table of tableNames) {
      const t0 = Date.now();
      const tableDir = join(dir, table);
      const temp = join(tableDir, `.${table}.${folder.slice('snapshot='.length)}${tempSuffix}`);
      const hidden = join(tableDir, `.${folder}${tempSuffix}`);
      try {
        mkdirSync(tableDir, { recursive: true });
        await writer.write(table, temp);
        const info = await writer.inspect(temp);
        const sha256 = await sha256File(temp);
        const bytes = statSync(temp).size;
        mkdirSync(hidden, { recursive: true });
        staged.push({ from: hidden, to: join(tableDir, folder) });
        renameSync(temp, join(hidden, `${table}.parquet`));
        const entry: TableSnapshot = {
          table,
          path: `${table}/${folder}/${table}.parquet`,
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
        throw snapshotError(`the snapshot of ${table} in ${tableDir}`, e);
      } finally {
        removeQuietly(temp);
      }
    }
    // Every table is written: the folders appear now, one rename each, each with its file (a process killed before
    // leaves only hidden temporaries, which retention removes).
    for (const { from, to } of staged) {
      try {
        renameSync(from, to);
      } catch (e) {
        throw snapshotError(`the snapshot folder ${to}`, e);
      }
      placed.push(to);
    }
  } catch (e) {
    for (const { from } of staged) removeQuietly(from);
    for (const to of placed) removeQuietly(to);
    throw e;
  } finally {
    await writer.close();
  }

  const previous = readManifest(dir);
  const tables: Record<string, ManifestEntry> = {};
  for (const [name, entry] of Object.entries(previous?.tables ?? {})) {
    if (existsSync(join(dir, entry.path))) tables[name] = entry;
  }
  for (const { table, durationMs: _ms, ...entry } of written) tables[table] = entry;
  try {
    writeManifest(dir, { version: 1, updated_at: new Date().toISOString(), run_id: options.runId, tables });
  } catch (e) {
    // The manifest still names the last good set: this run's folders go, as when a table fails.
    for (const to of placed) removeQuietly(to);
    throw snapshotError(`the manifest in ${dir}`, e);
  }

  const removed = [...removeStrayManifestTemps(dir)];
  for (const table of tableNames) removed.push(...applyRetention(dir, table, options.retain, folder));
  return {
    dir,
    snapshot: folder.slice('snapshot='.length),
    manifestPath: join(dir, manifestName),
    tables: written,
    removed,
    durationMs: Date.now() - started,
  };
}
