/**
 * Where snapshots go when `--snapshots` is a URL rather than a folder: an object store, seen as flat keys under one
 * prefix. Only what publishing a snapshot needs: objects appear whole or not at all (a PUT, or a multipart upload
 * once completed), and there is no rename, so the manifest, written last, is what makes a snapshot current.
 */
export interface ObjectStore {
  /** `s3://bucket/prefix`, as the user gave it: for messages and results. */
  readonly description: string;
  /** Uploads a local file under `key` (multipart when large); `signal` abandons the upload. */
  putFile(key: string, path: string, contentType: string, signal?: AbortSignal): Promise<void>;
  putText(key: string, text: string, contentType: string): Promise<void>;
  /** The object's text, or null when there is no such object. */
  getText(key: string): Promise<string | null>;
  /** Downloads `key` to the local file `path`. */
  getFile(key: string, path: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Copies the object `from` to `to` within the store (server-side): `to` is replaced whole, as by a PUT. */
  copy(from: string, to: string): Promise<void>;
  /** Every key that starts with `prefix` (relative to the store's own prefix, as are all keys here). */
  list(prefix: string): Promise<string[]>;
  delete(key: string): Promise<void>;
  /**
   * Abandons multipart uploads left incomplete under the store's prefix (a process killed mid-upload leaves its parts,
   * invisible but stored). Best-effort: a store that cannot list them returns 0.
   */
  abortIncompleteUploads(): Promise<number>;
  close(): void;
}
