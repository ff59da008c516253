import fs, { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { manifestName, readManifest, writeSnapshots } from '../../src/snapshot/index.ts';
import { pendingName } from '../../src/snapshot/pending.ts';
import { openTinyDuckDB, type TestWarehouse } from '../support/model-fixtures.ts';
import { tempDir } from '../support/temp-dir.ts';

/**
 * The disk fails the folder fsync that follows a rename (EIO: a failing disk, a full one on some file systems, a
 * network file system): the rename itself happened. A real snapshot write into a real DuckDB warehouse's Parquet
 * files; only that one fsync is made to fail, through the `fs` module object durable-file.ts calls.
 */
function failDirFsyncAfterRenameTo(target: string): { restore(): void } {
  const { openSync, fsyncSync, renameSync } = { ...fs };
  const paths = new Map<number, string>();
  let renamed = false;
  let failed = false;
  const spies = [
    vi.spyOn(fs, 'openSync').mockImplementation((...args: Parameters<typeof fs.openSync>) => {
      const fd = openSync(...args);
      paths.set(fd, String(args[0]));
      return fd;
    }),
    vi.spyOn(fs, 'renameSync').mockImplementation((from, to) => {
      renameSync(from, to);
      if (String(to) === target) renamed = true;
    }),
    vi.spyOn(fs, 'fsyncSync').mockImplementation((fd) => {
      if (renamed && !failed && paths.get(fd) === join(target, '..')) {
        failed = true;
        throw Object.assign(new Error(`EIO: i/o error, fsync`), { code: 'EIO', errno: -5, syscall: 'fsync' });
      }
      fsyncSync(fd);
    }),
  ];
  return { restore: () => spies.forEach((s) => s.mockRestore()) };
}

describe('a folder fsync failing after a rename in a snapshot write', () => {
  let t: TestWarehouse;
  let dir: string;
  let cleanup: () => Promise<void>;
  let fault: { restore(): void } | undefined;
  const write = (second: number) =>
    writeSnapshots(t.warehouse, {
      dir,
      runId: `run-${second}`,
      retain: 3,
      tables: ['programs', 'applications'],
      now: new Date(Date.UTC(2026, 10, 25, 8, 0, second)),
    });
  /** Every `snapshot=` folder on the disk, as `table/folder`. */
  const folders = (): string[] =>
    ['programs', 'applications'].flatMap((table) =>
      readdirSync(join(dir, table))
        .filter((n) => n.startsWith('snapshot='))
        .map((n) => `${table}/${n}`),
    );
  beforeAll(async () => {
    t = await openTinyDuckDB('fsync-fail');
  });
  afterAll(async () => {
    await t?.cleanup();
  });
  beforeEach(async () => {
    ({ path: dir, remove: cleanup } = await tempDir('gf-fsync-fail-'));
  });
  afterEach(async () => {
    fault?.restore();
    fault = undefined;
    await cleanup();
  });

  it('after the manifest rename: the snapshot it names stays whole, and the error says it was published', async () => {
    await write(0);
    fault = failDirFsyncAfterRenameTo(join(dir, manifestName));
    const error = await write(1).then(
      () => new Error('the write succeeded'),
      (e: unknown) => e as Error,
    );
    fault.restore();
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(/EIO/);
    expect(error.message).not.toMatch(/still names the last good snapshot/);
    // Whatever the manifest names is on the disk: a reader following it finds every file.
    const manifest = readManifest(dir);
    for (const entry of Object.values(manifest?.tables ?? {})) expect(existsSync(join(dir, entry.path))).toBe(true);
    expect(manifest?.run_id).toBe('run-1');
    // The note stays for a crash that takes the rename back; the next write finds the snapshot published and keeps it.
    expect(existsSync(join(dir, pendingName))).toBe(true);
    await write(2);
    expect(folders()).toHaveLength(6);
    expect(existsSync(join(dir, pendingName))).toBe(false);
  });

  it("after a table folder's rename: the folder goes with the rest, no snapshot the manifest never named is left", async () => {
    await write(0);
    const before = folders();
    fault = failDirFsyncAfterRenameTo(join(dir, 'programs', 'snapshot=2026-11-25T08-00-01Z'));
    const error = await write(1).then(
      () => new Error('the write succeeded'),
      (e: unknown) => e as Error,
    );
    fault.restore();
    expect(error.message).toMatch(/EIO/);
    expect(error.message).toMatch(/still names the last good snapshot/);
    expect(readManifest(dir)?.run_id).toBe('run-0');
    expect(folders()).toEqual(before);
    expect(existsSync(join(dir, pendingName))).toBe(false);
  });
});
