import fs from 'node:fs';
import { dirname } from 'node:path';
import { expect, vi } from 'vitest';

/** One file system call that decides what survives a crash, with the path it acted on (fds resolved to paths). */
export type FsEvent =
  | { readonly op: 'write' | 'fsync' | 'rm'; readonly path: string }
  | { readonly op: 'rename'; readonly from: string; readonly to: string };

type Callback = (...args: unknown[]) => void;

/**
 * Records the order of writes, fsyncs, renames and removals made through the `fs` module object (as
 * src/util/durable-file.ts and Node's file streams call it), passing every call through: a power cut cannot be
 * staged in a test, but the order of calls that makes one harmless can be observed.
 */
export function traceFs(): { readonly events: FsEvent[]; restore(): void } {
  const events: FsEvent[] = [];
  const paths = new Map<number, string>();
  const pathOf = (fd: unknown): string => paths.get(fd as number) ?? `fd ${String(fd)}`;
  const o = {
    openSync: fs.openSync,
    open: fs.open,
    fsyncSync: fs.fsyncSync,
    fsync: fs.fsync,
    writeFileSync: fs.writeFileSync,
    write: fs.write,
    writev: fs.writev,
    renameSync: fs.renameSync,
    rmSync: fs.rmSync,
  };
  const spies = [
    vi.spyOn(fs, 'openSync').mockImplementation((...args: Parameters<typeof fs.openSync>) => {
      const fd = o.openSync(...args);
      paths.set(fd, String(args[0]));
      return fd;
    }),
    vi.spyOn(fs, 'open').mockImplementation(((path: fs.PathLike, ...rest: unknown[]) => {
      const callback = rest.pop() as Callback;
      const wrapped = (error: unknown, fd: number): void => {
        if (!error) paths.set(fd, String(path));
        callback(error, fd);
      };
      (o.open as (...a: unknown[]) => void)(path, ...rest, wrapped);
    }) as typeof fs.open),
    vi.spyOn(fs, 'fsyncSync').mockImplementation((fd) => {
      o.fsyncSync(fd);
      events.push({ op: 'fsync', path: pathOf(fd) });
    }),
    vi.spyOn(fs, 'fsync').mockImplementation((fd, callback) => {
      o.fsync(fd, (error) => {
        if (!error) events.push({ op: 'fsync', path: pathOf(fd) });
        callback(error);
      });
    }),
    vi.spyOn(fs, 'writeFileSync').mockImplementation((file, ...rest) => {
      o.writeFileSync(file, ...rest);
      events.push({ op: 'write', path: typeof file === 'number' ? pathOf(file) : String(file) });
    }),
    vi.spyOn(fs, 'write').mockImplementation(((fd: number, ...rest: unknown[]) => {
      events.push({ op: 'write', path: pathOf(fd) });
      (o.write as (...a: unknown[]) => void)(fd, ...rest);
    }) as typeof fs.write),
    vi.spyOn(fs, 'writev').mockImplementation(((fd: number, ...rest: unknown[]) => {
      events.push({ op: 'write', path: pathOf(fd) });
      (o.writev as (...a: unknown[]) => void)(fd, ...rest);
    }) as typeof fs.writev),
    vi.spyOn(fs, 'renameSync').mockImplementation((from, to) => {
      o.renameSync(from, to);
      events.push({ op: 'rename', from: String(from), to: String(to) });
    }),
    vi.spyOn(fs, 'rmSync').mockImplementation((path, options) => {
      o.rmSync(path, options);
      events.push({ op: 'rm', path: String(path) });
    }),
  ];
  return { events, restore: () => spies.forEach((s) => s.mockRestore()) };
}

const at = (events: readonly FsEvent[], from: number, match: (e: FsEvent) => boolean): number => {
  for (let i = from; i < events.length; i++) if (match(events[i]!)) return i;
  return -1;
};

/**
 * Every rename in `events` is a durable publish: a renamed file's last write is followed by its fsync before the
 * rename (a renamed folder's files were published into it the same way), and the folder it lands in is fsynced
 * after it, before the next rename. Returns the renames, for the caller to check they are the expected ones.
 */
export function expectDurableRenames(events: readonly FsEvent[], renamedFolders: ReadonlySet<string> = new Set()) {
  const renames: { from: string; to: string }[] = [];
  events.forEach((e, i) => {
    if (e.op !== 'rename') return;
    renames.push({ from: e.from, to: e.to });
    if (!renamedFolders.has(e.from)) {
      let lastWrite = -1;
      events.slice(0, i).forEach((w, j) => {
        if (w.op === 'write' && w.path === e.from) lastWrite = j;
      });
      const synced = at(events, lastWrite + 1, (s) => s.op === 'fsync' && s.path === e.from);
      expect(synced, `${e.from} fsynced before its rename to ${e.to}`).toBeGreaterThan(-1);
      expect(synced, `${e.from} fsynced before its rename to ${e.to}`).toBeLessThan(i);
    }
    const next = at(events, i + 1, (n) => n.op === 'rename');
    const dirSynced = at(events, i + 1, (s) => s.op === 'fsync' && s.path === dirname(e.to));
    expect(dirSynced, `${dirname(e.to)} fsynced after the rename to ${e.to}`).toBeGreaterThan(-1);
    if (next >= 0) expect(dirSynced, `${dirname(e.to)} fsynced before the next rename`).toBeLessThan(next);
  });
  return renames;
}
