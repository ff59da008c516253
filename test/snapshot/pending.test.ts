import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manifestName } from '../../src/snapshot/manifest.ts';
import { pendingName, undoPendingSnapshot, type Pending } from '../../src/snapshot/pending.ts';
import { LocalFolderStore } from '../../src/snapshot/local-folder-store.ts';
import { undoKilledSnapshotWrite } from '../../src/snapshot/snapshot-target.ts';
import { takeWriterLock, writerLockName } from '../../src/snapshot/writer-lock.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { tempDir } from '../support/temp-dir.ts';

const notePending = (dir: string, pending: Pending): Promise<void> => new LocalFolderStore(dir).notePending(pending);

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ path: dir, remove: cleanup } = await tempDir('gf-pending-'));
});
afterEach(async () => cleanup());

const folder = 'snapshot=2026-11-25T07-00-00Z';
function place(path: string): void {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), 'x');
}
function manifestNaming(tables: Record<string, string>): void {
  const entries = Object.fromEntries(Object.entries(tables).map(([t, f]) => [t, { path: `${t}/${f}/${t}.parquet` }]));
  writeFileSync(join(dir, manifestName), JSON.stringify({ version: 1, tables: entries }));
}

describe('undoPendingSnapshot (a snapshot write a kill cut short)', () => {
  it('removes its folders the manifest does not name and its temporaries, keeps the others', async () => {
    place('a/snapshot=2026-11-24T07-00-00Z/a.parquet'); // the last good one
    place(`a/${folder}/a.parquet`); // renamed into place before the kill
    place(`b/.${folder}.tmp/b.parquet`); // still hidden
    place('b/.b.2026-11-25T07-00-00Z.tmp'); // being written
    manifestNaming({ a: 'snapshot=2026-11-24T07-00-00Z' });
    await notePending(dir, { folder, tables: ['a', 'b'] });

    expect((await undoPendingSnapshot(new LocalFolderStore(dir))).length).toBe(3);
    expect(existsSync(join(dir, 'a/snapshot=2026-11-24T07-00-00Z/a.parquet'))).toBe(true);
    expect(existsSync(join(dir, `a/${folder}`))).toBe(false);
    expect(existsSync(join(dir, `b/.${folder}.tmp`))).toBe(false);
    expect(existsSync(join(dir, 'b/.b.2026-11-25T07-00-00Z.tmp'))).toBe(false);
    expect(existsSync(join(dir, pendingName))).toBe(false);
  });

  it('keeps the folders once the manifest names them (killed after its rename)', async () => {
    place(`a/${folder}/a.parquet`);
    manifestNaming({ a: folder });
    await notePending(dir, { folder, tables: ['a'] });
    expect(await undoPendingSnapshot(new LocalFolderStore(dir))).toEqual([]);
    expect(existsSync(join(dir, `a/${folder}/a.parquet`))).toBe(true);
    expect(existsSync(join(dir, pendingName))).toBe(false);
  });

  it('points latest/ at the files the manifest names when the kill came before it was placed', async () => {
    place('a/snapshot=2026-11-24T07-00-00Z/a.parquet');
    place(`a/${folder}/a.parquet`);
    writeFileSync(join(dir, `a/${folder}/a.parquet`), 'new');
    place('latest/a.parquet');
    writeFileSync(join(dir, 'latest/a.parquet'), 'old'); // the previous snapshot's, not yet replaced
    manifestNaming({ a: folder });
    await notePending(dir, { folder, tables: ['a'] });
    await undoPendingSnapshot(new LocalFolderStore(dir));
    expect(readFileSync(join(dir, 'latest/a.parquet'), 'utf8')).toBe('new');
    expect(existsSync(join(dir, pendingName))).toBe(false);
  });

  it('drops a note cut short by a kill (written before any file) and nothing else', async () => {
    place(`a/${folder}/a.parquet`);
    writeFileSync(join(dir, pendingName), '{"folder":"snap');
    expect(await undoPendingSnapshot(new LocalFolderStore(dir))).toEqual([]);
    expect(existsSync(join(dir, `a/${folder}/a.parquet`))).toBe(true);
    expect(existsSync(join(dir, pendingName))).toBe(false);
  });
});

describe('undoKilledSnapshotWrite (a sync cleaning up before it loads)', () => {
  it('leaves a write under way alone: another writer holding the directory is not a killed one', async () => {
    place(`a/${folder}/a.parquet`); // renamed into place by a write that has not yet written its manifest
    await notePending(dir, { folder, tables: ['a'] });
    const other = takeWriterLock(dir, 'grantflow snapshot', silentLogger);
    try {
      expect(await undoKilledSnapshotWrite(dir, 'grantflow sync')).toEqual([]);
      expect(existsSync(join(dir, `a/${folder}/a.parquet`))).toBe(true);
      expect(existsSync(join(dir, pendingName))).toBe(true);
    } finally {
      other.release();
    }
    // Once no writer holds the directory, the note is a killed write's: its folder goes, and the lock is let go.
    expect(await undoKilledSnapshotWrite(dir, 'grantflow sync')).toEqual([join(dir, 'a', folder)]);
    expect(existsSync(join(dir, pendingName))).toBe(false);
    expect(existsSync(join(dir, writerLockName))).toBe(false);
  });

  it('does nothing, and takes no lock, where no write is pending', async () => {
    place(`a/${folder}/a.parquet`);
    expect(await undoKilledSnapshotWrite(dir, 'grantflow sync')).toEqual([]);
    expect(existsSync(join(dir, `a/${folder}/a.parquet`))).toBe(true);
    expect(existsSync(join(dir, writerLockName))).toBe(false);
  });
});
