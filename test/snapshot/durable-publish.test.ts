import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { manifestName, readManifest, writeSnapshots } from '../../src/snapshot/index.ts';
import { pendingName, undoPendingSnapshot, type Pending } from '../../src/snapshot/pending.ts';
import { LocalFolderStore } from '../../src/snapshot/local-folder-store.ts';
import { openTinyDuckDB, type TestWarehouse } from '../support/model-fixtures.ts';
import { expectDurableRenames, traceFs, type FsEvent } from '../support/fs-trace.ts';
import { tempDir } from '../support/temp-dir.ts';

const notePending = (dir: string, pending: Pending): Promise<void> => new LocalFolderStore(dir).notePending(pending);

/**
 * A power cut cannot be staged in a test: these check, on a real snapshot write into a real DuckDB warehouse's
 * Parquet files, the order of file system calls that lets a crash at any point leave the old snapshot or the new.
 */
describe('snapshot publishing survives a crash (fsync order)', () => {
  let t: TestWarehouse;
  let dir: string;
  let cleanup: () => Promise<void>;
  let trace: ReturnType<typeof traceFs> | undefined;
  beforeAll(async () => {
    t = await openTinyDuckDB('durable');
  });
  afterAll(async () => {
    await t?.cleanup();
  });
  beforeEach(async () => {
    ({ path: dir, remove: cleanup } = await tempDir('gf-durable-'));
  });
  afterEach(async () => {
    trace?.restore();
    trace = undefined;
    await cleanup();
  });

  it('fsyncs each Parquet file before its rename, each folder after, and the manifest likewise', async () => {
    dir = join(dir, 'new', 'snapshots');
    trace = traceFs();
    const result = await writeSnapshots(t.warehouse, {
      dir,
      runId: 'run-1',
      retain: 2,
      tables: ['programs', 'applications'],
      now: new Date('2026-11-25T08:00:00Z'),
    });
    const events = trace.events;
    const folder = `snapshot=${result.snapshot}`;
    const hidden = (table: string) => join(dir, table, `.${folder}.tmp`);
    const renames = expectDurableRenames(events, new Set(['programs', 'applications'].map(hidden)));
    expect(renames.map((r) => [basename(dirname(r.to)), basename(r.to)])).toEqual([
      [`.${folder}.tmp`, 'programs.parquet'],
      [`.${folder}.tmp`, 'applications.parquet'],
      ['programs', folder],
      ['applications', folder],
      ['snapshots', manifestName],
      // latest/ only after the manifest names the files it holds.
      ['latest', 'programs.parquet'],
      ['latest', 'applications.parquet'],
    ]);
    const firstRename = events.findIndex((e) => e.op === 'rename');
    // Folders the write created have their entries on the disk: the snapshot directory's own, up to the one that was
    // there, and each table's, before a file inside them is published.
    const synced = (path: string): number => events.findIndex((e) => e.op === 'fsync' && e.path === path);
    for (const d of [dirname(dirname(dir)), dirname(dir), dir]) {
      expect(synced(d), `${d} fsynced`).toBeGreaterThan(-1);
      expect(synced(d)).toBeLessThan(firstRename);
    }
    expect(readManifest(dir)?.tables.programs?.path).toBe(`programs/${folder}/programs.parquet`);
  });

  it('notes the snapshot as pending on the disk (data and entry) before anything is renamed into place', async () => {
    const write = (second: number) =>
      writeSnapshots(t.warehouse, {
        dir,
        runId: `run-${second}`,
        retain: 2,
        tables: ['programs'],
        now: new Date(Date.UTC(2026, 10, 25, 8, 0, second)),
      });
    await write(0);
    // The second write creates no folder, whose fsync would make the note's entry durable by the way.
    trace = traceFs();
    await write(1);
    const events = trace.events;
    expectDurableRenames(events, new Set([join(dir, 'programs', '.snapshot=2026-11-25T08-00-01Z.tmp')]));
    const note = join(dir, pendingName);
    const firstRename = events.findIndex((e) => e.op === 'rename');
    const noteSynced = events.findIndex((e) => e.op === 'fsync' && e.path === note);
    expect(noteSynced).toBeGreaterThan(events.findIndex((e) => e.op === 'write' && e.path === note));
    const noteEntrySynced = events.findIndex((e, i) => i > noteSynced && e.op === 'fsync' && e.path === dir);
    expect(noteEntrySynced).toBeGreaterThan(noteSynced);
    expect(noteEntrySynced).toBeLessThan(firstRename);
  });

  it('a killed write is undone durably: each removal is on the disk before the note saying to remove it goes', async () => {
    const folder = 'snapshot=2026-11-25T08-00-00Z';
    mkdirSync(join(dir, 'a', folder), { recursive: true });
    writeFileSync(join(dir, 'a', folder, 'a.parquet'), 'x');
    await notePending(dir, { folder, tables: ['a'] });
    trace = traceFs();
    expect(await undoPendingSnapshot(new LocalFolderStore(dir))).toEqual([join(dir, 'a', folder)]);
    const events: FsEvent[] = trace.events;
    const removed = events.findIndex((e) => e.op === 'rm' && e.path === join(dir, 'a', folder));
    const synced = events.findIndex((e, i) => i > removed && e.op === 'fsync' && e.path === join(dir, 'a'));
    expect(removed).toBeGreaterThan(-1);
    expect(synced).toBeGreaterThan(removed);
  });
});
