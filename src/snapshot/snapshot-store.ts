import type { GrantflowError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';

/**
 * Where snapshots are published: a local folder (local-folder-store.ts) or an object store (bucket-store.ts). One
 * algorithm (write-snapshots.ts) stages, publishes, writes the manifest and `latest/`, undoes a killed write
 * (pending.ts) and applies retention (retention.ts) through this interface; what differs is how a file becomes
 * visible. A folder stages each table's file in a hidden folder and renames the folders into place once every table
 * is written; a bucket has no rename, so each file is uploaded to its final key, and only the manifest, put last,
 * makes the snapshot current. Keys are relative to the location, with `/` separators, as the manifest names them.
 */
export interface SnapshotStore {
  /** The folder (absolute) or the URL, as results and messages name it. */
  readonly where: string;
  /** Where the manifest is, for the result. */
  readonly manifestLocation: string;
  /** Takes the location's writer lock (one writer at a time) or throws LockedError naming the live holder. */
  lock(command: string, logger: Logger): Promise<StoreLock>;
  /** The text stored at `key` (the manifest, the pending note), or null when there is none. */
  readText(key: string): Promise<string | null>;
  exists(key: string): Promise<boolean>;
  /** Writes the pending note; stored (on the disk) before it returns. */
  notePending(pending: Pending): Promise<void>;
  clearPending(): Promise<void>;
  /** Replaces the manifest whole: a reader sees the old one or the new one. */
  putManifest(text: string): Promise<void>;
  /** The `snapshot=` folders present among `tables`, as `<table>/<folder>`. */
  takenFolders(tables: readonly string[]): Promise<Set<string>>;
  /** The `snapshot=` folders of `table`, named as grantflow names them. */
  folders(table: string): Promise<string[]>;
  /** The local file DuckDB writes `table`'s Parquet file of `folder` into; removed by the caller after `stage`. */
  scratchFile(table: string, folder: string): Promise<string>;
  /** Takes the finished `file` into the write: not yet named by any manifest. */
  stage(table: string, folder: string, file: string, signal?: AbortSignal): Promise<void>;
  /** Makes the staged files of `tables` visible at `<table>/<folder>/` (a bucket's uploads already are). */
  placeStaged(tables: readonly string[], folder: string, signal?: AbortSignal): Promise<void>;
  /**
   * Removes what a write of `folder` left of `table`: its temporaries, and its folder unless `published` (the manifest
   * names it). Returns what was removed.
   */
  discard(table: string, folder: string, published: boolean): Promise<string[]>;
  /** Replaces `latest/<table>.parquet` with the file at `path`, whole. */
  placeLatest(table: string, path: string): Promise<void>;
  /** Removes an old snapshot folder of `table` (retention); returns what was removed. */
  removeFolder(table: string, folder: string): Promise<string[]>;
  /** Before a write, under its lock: leftovers a killed write leaves outside its note. Returns what was removed. */
  tidy(logger: Logger): Promise<string[]>;
  /** With retention: `table`'s temporaries of earlier writes. */
  tidyTable(table: string): Promise<string[]>;
  /** Abandons uploads a killed write left incomplete (a bucket's multipart uploads). */
  abortPartialUploads(): Promise<void>;
  /** An error of `step` as the run's failure, in the store's words. */
  failure(step: FailedStep, e: unknown): GrantflowError;
  /**
   * The manifest's replacement failed, yet the manifest names the new snapshot: the error to end the write with (the
   * pending note stays), or null when that read is confirmation enough.
   */
  unconfirmed(e: unknown): GrantflowError | null;
  close(): void;
}

/** The snapshot a write is about to publish, as its pending note names it (see pending.ts). */
export interface Pending {
  readonly folder: string;
  readonly tables: readonly string[];
}

export interface StoreLock {
  release(): Promise<void>;
}

export type FailedStep =
  | { readonly kind: 'prepare' }
  | { readonly kind: 'table'; readonly table: string }
  | { readonly kind: 'manifest' }
  | { readonly kind: 'write' }
  | { readonly kind: 'latest'; readonly table: string };

/** Where each table's file of a snapshot goes, relative to the location. */
export const filePath = (table: string, folder: string): string => `${table}/${folder}/${table}.parquet`;
