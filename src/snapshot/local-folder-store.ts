import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, type Dirent } from 'node:fs';
import { join, resolve } from 'node:path';
import { ExitCode, firstLine, GrantflowError, isGrantflowError, throwIfStopped } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { pathProblem } from '../util/path-problem.ts';
import { testPause } from '../util/test-pause.ts';
import {
  createFileDurable,
  fsyncFile,
  mkdirDurable,
  removeDurable,
  renameDurable,
  writeFileDurable,
} from '../util/durable-file.ts';
import { placeLatest, removeStrayLatestTemps, latestFolder } from './latest.ts';
import { manifestName } from './manifest.ts';
import { pendingName } from './pending.ts';
import { hiddenFolderName, manifestTempName, snapshotName, tableTempName } from './retention.ts';
import { hiddenFolder, tempFile, tempSuffix } from './snapshot-dir.ts';
import type { FailedStep, Pending, SnapshotStore, StoreLock } from './snapshot-store.ts';
import { takeWriterLock } from './writer-lock.ts';

function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

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
 * Snapshots in a local folder. A table's file is written under a temporary name that does not end in `.parquet`,
 * fsynced, and renamed into a hidden folder; once every table is written, the hidden folders are renamed into place,
 * so a reader never sees a partial file or an empty snapshot folder, and a failure leaves no new `snapshot=` folder.
 * Every rename is followed by an fsync of the folder it lands in (durable-file.ts), so a power cut or an OS crash
 * leaves what a kill at that step would; removals the pending note depends on are made durable before it goes.
 */
export class LocalFolderStore implements SnapshotStore {
  readonly where: string;
  readonly manifestLocation: string;

  constructor(dir: string) {
    this.where = resolve(dir);
    this.manifestLocation = join(this.where, manifestName);
  }

  private path(key: string): string {
    return join(this.where, ...key.split('/'));
  }

  lock(command: string, logger: Logger): Promise<StoreLock> {
    mkdirDurable(this.where);
    const lock = takeWriterLock(this.where, command, logger);
    return Promise.resolve({ release: async () => lock.release() });
  }

  async readText(key: string): Promise<string | null> {
    try {
      return readFileSync(this.path(key), 'utf8');
    } catch {
      return null;
    }
  }

  async exists(key: string): Promise<boolean> {
    return existsSync(this.path(key));
  }

  /**
   * Written first, before any file of the snapshot, and on the disk before it returns: a note cut short by a kill or
   * a crash means nothing was staged yet, and a folder renamed into place later cannot outlive a crash without it.
   */
  async notePending(pending: Pending): Promise<void> {
    createFileDurable(this.path(pendingName), JSON.stringify(pending));
  }

  async clearPending(): Promise<void> {
    rmSync(this.path(pendingName), { force: true });
  }

  /** Written under a temporary name, fsynced and renamed (the files it names were made durable before it). */
  async putManifest(text: string): Promise<void> {
    writeFileDurable(this.manifestLocation, join(this.where, `.${manifestName}.${process.pid}${tempSuffix}`), text);
  }

  async takenFolders(tables: readonly string[]): Promise<Set<string>> {
    return new Set(tables.flatMap((t) => entries(join(this.where, t)).map((e) => `${t}/${e.name}`)));
  }

  async folders(table: string): Promise<string[]> {
    return entries(join(this.where, table))
      .filter((e) => e.isDirectory() && snapshotName.test(e.name))
      .map((e) => e.name);
  }

  async scratchFile(table: string, folder: string): Promise<string> {
    const tableDir = join(this.where, table);
    mkdirDurable(tableDir);
    return join(tableDir, tempFile(table, folder));
  }

  async stage(table: string, folder: string, file: string): Promise<void> {
    const hidden = join(this.where, table, hiddenFolder(folder));
    mkdirSync(hidden, { recursive: true });
    // On the disk before its name is: a crash must not leave the manifest naming a torn file.
    fsyncFile(file);
    renameDurable(file, join(hidden, `${table}.parquet`));
  }

  /** One rename each, each folder with its file (a process killed before or between them leaves them pending). */
  async placeStaged(tables: readonly string[], folder: string, signal?: AbortSignal): Promise<void> {
    for (const table of tables) {
      throwIfStopped(signal);
      const to = join(this.where, table, folder);
      try {
        renameDurable(join(this.where, table, hiddenFolder(folder)), to);
      } catch (e) {
        // Renamed, but its folder's fsync failed: the folder is in place all the same, and goes with the rest.
        throw snapshotError(`the snapshot folder ${to}`, e);
      }
      await testPause(`snapshot folder placed ${table}`);
    }
  }

  async discard(table: string, folder: string, published: boolean): Promise<string[]> {
    const tableDir = join(this.where, table);
    const leftovers = [tempFile(table, folder), hiddenFolder(folder), ...(published ? [] : [folder])];
    const removed: string[] = [];
    for (const name of leftovers) {
      const path = join(tableDir, name);
      if (!existsSync(path)) continue;
      // Gone for good before the note is: a crash must not bring back a folder without the note naming it.
      removeDurable(path);
      removed.push(path);
    }
    return removed;
  }

  async placeLatest(table: string, path: string): Promise<void> {
    placeLatest(this.where, table, path);
  }

  /** Not made durable: a folder retention removed may come back after a crash, and goes with the next retention. */
  async removeFolder(table: string, folder: string): Promise<string[]> {
    const path = join(this.where, table, folder);
    rmSync(path, { recursive: true, force: true });
    return [path];
  }

  async tidy(): Promise<string[]> {
    const removed = removeStrayLatestTemps(this.where);
    for (const e of entries(this.where)) {
      if (e.isFile() && manifestTempName.test(e.name)) {
        rmSync(join(this.where, e.name), { force: true });
        removed.push(join(this.where, e.name));
      }
    }
    return removed;
  }

  /** Temporary files and hidden folders of writes that were interrupted. */
  async tidyTable(table: string): Promise<string[]> {
    const tableDir = join(this.where, table);
    const tableTemp = tableTempName(table);
    const removed: string[] = [];
    for (const e of entries(tableDir)) {
      if ((e.isFile() && tableTemp.test(e.name)) || (e.isDirectory() && hiddenFolderName.test(e.name))) {
        rmSync(join(tableDir, e.name), { recursive: true, force: true });
        removed.push(join(tableDir, e.name));
      }
    }
    return removed;
  }

  async abortPartialUploads(): Promise<void> {}

  failure(step: FailedStep, e: unknown): GrantflowError {
    switch (step.kind) {
      case 'prepare':
        return snapshotError(`the snapshot directory ${this.where}`, e);
      case 'table': {
        const tableDir = join(this.where, step.table);
        return snapshotError(`the snapshot of ${step.table} in ${tableDir}`, e, tableDir);
      }
      case 'manifest':
        return snapshotError(`the manifest in ${this.where}`, e);
      case 'write':
        return snapshotError(`the snapshot in ${this.where}`, e);
      case 'latest': {
        if (isGrantflowError(e)) return e;
        const where = join(this.where, latestFolder);
        const why = (e as NodeJS.ErrnoException).code === undefined ? firstLine(e) : pathProblem(e, where);
        return new GrantflowError(
          `the snapshot was published (the manifest in ${this.where} names it) but the latest file of ${step.table} ` +
            `could not be written: ${why}; the next sync or snapshot brings latest/ in line with the manifest`,
          ExitCode.runFailed,
          'snapshot_failed',
          { cause: e },
        );
      }
    }
  }

  /** The manifest was renamed but its folder's fsync failed: readers follow it now, yet a crash may take it back. */
  unconfirmed(e: unknown): GrantflowError {
    return new GrantflowError(
      `the snapshot was published (the manifest in ${this.where} names it) but the disk did not confirm it: ` +
        `${firstLine(e)}; check the disk before the next run`,
      ExitCode.runFailed,
      'snapshot_failed',
      { cause: e },
    );
  }

  close(): void {}
}
