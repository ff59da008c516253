import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { GrantflowError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { testPause } from '../util/test-pause.ts';
import { takeBucketLock } from './bucket-lock.ts';
import { latestPath } from './latest.ts';
import { manifestName } from './manifest.ts';
import type { ObjectStore } from './object-store.ts';
import { pendingName } from './pending.ts';
import { snapshotName } from './retention.ts';
import { s3Failure } from './s3-store.ts';
import { filePath, type FailedStep, type Pending, type SnapshotStore, type StoreLock } from './snapshot-store.ts';
import { makeUploadStaging, removeAbandonedStaging } from './upload-staging.ts';

const parquetType = 'application/vnd.apache.parquet';
const jsonType = 'application/json';

/**
 * Snapshots in an object store, where nothing can be renamed: each table's Parquet file is written locally by DuckDB
 * (into a temporary folder, see upload-staging.ts) and uploaded to its final key, so until the manifest names them a
 * snapshot's objects are visible to a listing, never to a reader of the manifest. A killed write's objects are
 * deleted by the next write (pending.ts), with its incomplete multipart uploads and its local folder.
 */
export class BucketStore implements SnapshotStore {
  readonly where: string;
  readonly manifestLocation: string;
  private staging: string | null = null;

  constructor(private readonly objects: ObjectStore) {
    this.where = objects.description;
    this.manifestLocation = `${objects.description}/${manifestName}`;
  }

  lock(command: string, logger: Logger): Promise<StoreLock> {
    return takeBucketLock(this.objects, command, logger);
  }

  readText(key: string): Promise<string | null> {
    return this.objects.getText(key);
  }

  exists(key: string): Promise<boolean> {
    return this.objects.exists(key);
  }

  notePending(pending: Pending): Promise<void> {
    return this.objects.putText(pendingName, JSON.stringify(pending), jsonType);
  }

  clearPending(): Promise<void> {
    return this.objects.delete(pendingName);
  }

  putManifest(text: string): Promise<void> {
    return this.objects.putText(manifestName, text, jsonType);
  }

  async takenFolders(): Promise<Set<string>> {
    return new Set((await this.objects.list('')).map((k) => k.split('/').slice(0, 2).join('/')));
  }

  /** Keys of `<table>/<folder>/<file>`, grouped by folder: only keys named as grantflow names them. */
  private async keysByFolder(table: string, only?: string): Promise<Map<string, string[]>> {
    const byFolder = new Map<string, string[]>();
    for (const key of await this.objects.list(only === undefined ? `${table}/` : `${table}/${only}/`)) {
      const [, folder, file, ...rest] = key.split('/');
      if (folder === undefined || !snapshotName.test(folder) || file === undefined || rest.length > 0) continue;
      byFolder.set(folder, [...(byFolder.get(folder) ?? []), key]);
    }
    return byFolder;
  }

  async folders(table: string): Promise<string[]> {
    return [...(await this.keysByFolder(table)).keys()];
  }

  async scratchFile(table: string): Promise<string> {
    this.staging ??= makeUploadStaging();
    return join(this.staging, `${table}.parquet`);
  }

  async stage(table: string, folder: string, file: string, signal?: AbortSignal): Promise<void> {
    await this.objects.putFile(filePath(table, folder), file, parquetType, signal);
    await testPause(`snapshot uploaded ${table}`);
  }

  async placeStaged(): Promise<void> {}

  async discard(table: string, folder: string, published: boolean): Promise<string[]> {
    if (published) return [];
    const removed: string[] = [];
    for (const key of await this.objects.list(`${table}/${folder}/`)) {
      await this.objects.delete(key);
      removed.push(key);
    }
    return removed;
  }

  placeLatest(table: string, path: string): Promise<void> {
    return this.objects.copy(path, latestPath(table));
  }

  async removeFolder(table: string, folder: string): Promise<string[]> {
    const keys = (await this.keysByFolder(table, folder)).get(folder) ?? [];
    for (const key of keys) await this.objects.delete(key);
    return keys;
  }

  async tidy(logger: Logger): Promise<string[]> {
    const abandoned = removeAbandonedStaging();
    if (abandoned.length > 0) logger.info({ folders: abandoned }, 'removed the local files of a killed upload');
    return [];
  }

  async tidyTable(): Promise<string[]> {
    return [];
  }

  async abortPartialUploads(): Promise<void> {
    await this.objects.abortIncompleteUploads();
  }

  failure(step: FailedStep, e: unknown): GrantflowError {
    switch (step.kind) {
      case 'prepare':
        return s3Failure(`could not prepare the snapshot at ${this.where}`, e);
      case 'table':
        return s3Failure(`could not write the snapshot of ${step.table} to ${this.where}`, e);
      case 'manifest':
      case 'write':
        return s3Failure(`could not write the snapshot to ${this.where}`, e);
      case 'latest':
        return s3Failure(
          `the snapshot was published to ${this.where} (the manifest names it) but its latest object of ` +
            `${step.table} could not be written; the next sync or snapshot brings latest/ in line with the manifest`,
          e,
        );
    }
  }

  /** The request failed after the store kept it (a reset reply): the manifest read back is the confirmation. */
  unconfirmed(): null {
    return null;
  }

  close(): void {
    if (this.staging !== null) rmSync(this.staging, { recursive: true, force: true });
    this.staging = null;
    this.objects.close();
  }
}
