import { LockedError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { holderGone, keepRenewed, markHeld, markReleased, parseHolder, thisHolder } from '../util/lock-note.ts';
import type { ObjectStore } from './object-store.ts';
import type { StoreLock } from './snapshot-store.ts';
import { describeWriter, warnTakeOver, writerLockName, type WriterHolder } from './writer-lock.ts';

/**
 * The writer lock of a bucket: the folder's note (writer-lock.ts) as an object, judged by the same rule
 * (util/lock-note.ts). A bucket cannot renew an object's time, so the note carries `renewed`, rewritten every
 * heartbeat; and not every S3-compatible store refuses a PUT over an existing key, so the lock is read back once put:
 * of two writers that raced, the one whose note is not there stops before it writes anything.
 */
interface BucketHolder extends WriterHolder {
  readonly renewed?: string;
}

const jsonType = 'application/json';

function busy(objects: ObjectStore, holder: BucketHolder | 'unreadable'): LockedError {
  return new LockedError(
    `snapshots at ${objects.description} are being written by another grantflow process (${describeWriter(holder)}); ` +
      `nothing was written or removed: retry once it has finished (if no such process runs, delete ${writerLockName})`,
  );
}

const readHolder = async (objects: ObjectStore): Promise<BucketHolder | 'none' | 'unreadable'> => {
  const text = await objects.getText(writerLockName);
  if (text === null) return 'none';
  return parseHolder<BucketHolder>(text) ?? 'unreadable';
};

const ours = (h: BucketHolder | 'none' | 'unreadable', mine: BucketHolder): boolean =>
  typeof h === 'object' && h.pid === mine.pid && h.host === mine.host && h.since === mine.since;

export async function takeBucketLock(objects: ObjectStore, command: string, logger: Logger): Promise<StoreLock> {
  const key = `${objects.description}/${writerLockName}`;
  const now = new Date().toISOString();
  const mine: BucketHolder = { ...thisHolder(), command, since: now, renewed: now };
  const holder = await readHolder(objects);
  if (holder === 'unreadable') throw busy(objects, holder);
  if (holder !== 'none') {
    const renewedAt = Date.parse(holder.renewed ?? '');
    if (!holderGone(holder, key, Number.isNaN(renewedAt) ? undefined : renewedAt)) throw busy(objects, holder);
    warnTakeOver(logger, holder);
  }
  await objects.putText(writerLockName, JSON.stringify(mine), jsonType);
  const back = await readHolder(objects);
  if (!ours(back, mine)) throw busy(objects, back === 'none' ? 'unreadable' : back);
  markHeld(key);
  // One renewal at a time, and none after release: a late PUT would bring the lock back.
  let renewal: Promise<unknown> = Promise.resolve();
  let released = false;
  const stop = keepRenewed(() => {
    renewal = renewal
      .catch(() => undefined)
      .then(() =>
        released
          ? undefined
          : objects.putText(writerLockName, JSON.stringify({ ...mine, renewed: new Date().toISOString() }), jsonType),
      );
    return renewal;
  });
  return {
    release: async () => {
      stop();
      released = true;
      markReleased(key);
      await renewal.catch(() => undefined);
      // Only our own: never a lock another writer took over after ours was (wrongly) judged stale.
      if (ours(await readHolder(objects), mine)) await objects.delete(writerLockName);
    },
  };
}
