import { isObjectStoreUrl } from '../config/snapshot-location.ts';
import { LocalFolderStore } from './local-folder-store.ts';
import type { SnapshotStore } from './snapshot-store.ts';

export interface SnapshotStoreOptions {
  /** Path-style addressing when the location is an s3:// URL (see s3-store.ts). */
  readonly s3ForcePathStyle?: boolean;
}

/** The store `--snapshots` names: a local folder, or the bucket of an s3:// URL. */
export async function openSnapshotStore(target: string, options: SnapshotStoreOptions = {}): Promise<SnapshotStore> {
  if (!isObjectStoreUrl(target)) return new LocalFolderStore(target);
  // The AWS SDK is loaded only for an s3:// location: it costs every other run ~0.3 s of start-up.
  const [{ S3Store }, { BucketStore }] = await Promise.all([import('./s3-store.ts'), import('./bucket-store.ts')]);
  return new BucketStore(S3Store.open(target, { forcePathStyle: options.s3ForcePathStyle }));
}
