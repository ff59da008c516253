import { randomBytes } from 'node:crypto';
import type { Logger } from '../util/logger.ts';
import { silentLogger } from '../util/logger.ts';
import { isObjectStoreUrl } from '../config/snapshot-location.ts';
import { LockedError } from '../util/errors.ts';
import { checkSnapshotDir } from './snapshot-dir.ts';
import { openSnapshotStore } from './open-store.ts';
import { pendingName, undoPendingSnapshot } from './pending.ts';
import type { StoreLock } from './snapshot-store.ts';

/**
 * What the commands call about "the snapshot location", whether `--snapshots` names a folder or an s3:// URL: the
 * pre-flight check, and undoing what a killed write left.
 */
export interface SnapshotTargetOptions {
  readonly s3ForcePathStyle?: boolean;
}

/**
 * Pre-flight (sync, snapshot, doctor): the folder is writable, or the bucket takes an object and lets it be deleted
 * again (a small probe, put then deleted). A ConfigError (exit 2) for what a person must fix; a store that does not
 * answer fails with exit 1. Returns what was checked, in words.
 */
export async function checkSnapshotTarget(target: string, options: SnapshotTargetOptions = {}): Promise<string> {
  if (!isObjectStoreUrl(target)) {
    checkSnapshotDir(target);
    return `${target} is writable`;
  }
  // The AWS SDK is loaded only for an s3:// location: it costs every other run ~0.3 s of start-up.
  const { S3Store, s3Failure } = await import('./s3-store.ts');
  const store = S3Store.open(target, { forcePathStyle: options.s3ForcePathStyle });
  // Named like a temporary: never a snapshot or a manifest to a reader, and removed at once.
  const probe = `.grantflow-probe-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await store.putText(probe, 'grantflow write probe\n', 'text/plain');
    await store.delete(probe);
    return `${target} is writable (an object put and deleted)`;
  } catch (e) {
    throw s3Failure(`the snapshot location ${target} is not writable`, e);
  } finally {
    store.close();
  }
}

/**
 * Undoes what a killed or crashed snapshot write left unpublished (a folder's renamed folders, a bucket's uploaded
 * objects) as soon as a sync holds its run lock, under the location's writer lock: a write still under way there
 * (another warehouse's, sharing the location) is not a killed one, and is left alone. Returns what was removed;
 * nothing when no note is pending or another writer holds the location (its own next step cleans up); throws when
 * that could not be done.
 */
export async function undoKilledSnapshotWrite(
  target: string,
  command: string,
  logger: Logger = silentLogger,
  options: SnapshotTargetOptions = {},
): Promise<string[]> {
  const store = await openSnapshotStore(target, options);
  try {
    if ((await store.readText(pendingName)) === null) return [];
    let lock: StoreLock;
    try {
      lock = await store.lock(command, logger);
    } catch (e) {
      if (e instanceof LockedError) return [];
      throw e;
    }
    try {
      return await undoPendingSnapshot(store);
    } finally {
      await lock.release();
    }
  } catch (e) {
    throw store.failure({ kind: 'prepare' }, e);
  } finally {
    store.close();
  }
}
