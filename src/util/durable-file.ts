import fs from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Durable publishing. A rename is atomic against a kill, but after a power cut or an OS crash the file system may
 * show the new name over data that never reached the disk (an empty or torn file), or lose a rename or a new entry
 * the directory never wrote. So a file is fsynced before it is renamed into place, and its folder after, as is
 * every folder whose entries a later reader or run relies on. The whole `fs` module is called through its object
 * so a test can observe the order of the calls that reach the disk.
 */

/** Errors of fsyncing (or opening to fsync) a folder on platforms or file systems that cannot: Windows, some FUSE. */
const dirSyncUnsupported = new Set(['EISDIR', 'EINVAL', 'ENOTSUP', 'EPERM', 'EACCES']);

function unsupported(e: unknown): boolean {
  return dirSyncUnsupported.has((e as NodeJS.ErrnoException).code ?? '');
}

/** Flushes a file written by someone else (DuckDB's Parquet writer) to the disk. */
export function fsyncFile(path: string): void {
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes the entries of `dir` (files created, renamed or removed in it) durable. */
export function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, 'r');
  } catch (e) {
    if (unsupported(e)) return; // the rename is still atomic; its durability is the platform's
    throw e;
  }
  try {
    fs.fsyncSync(fd);
  } catch (e) {
    if (!unsupported(e)) throw e;
  } finally {
    fs.closeSync(fd);
  }
}

/** The same, without blocking the event loop (used while requests are in flight). */
export async function fsyncDirAsync(dir: string): Promise<void> {
  let fd: number;
  try {
    fd = await new Promise<number>((done, fail) => fs.open(dir, 'r', (e, fd) => (e ? fail(e) : done(fd))));
  } catch (e) {
    if (unsupported(e)) return;
    throw e;
  }
  try {
    await fsyncFd(fd);
  } catch (e) {
    if (!unsupported(e)) throw e;
  } finally {
    await new Promise<void>((done) => fs.close(fd, () => done()));
  }
}

/** Flushes an open file's data (a stream's file descriptor) without blocking the event loop. */
export function fsyncFd(fd: number): Promise<void> {
  return new Promise((done, fail) => fs.fsync(fd, (e) => (e ? fail(e) : done())));
}

/**
 * Writes `data` to `temp` (created, never reused), fsyncs it, renames it over `target` and fsyncs the folder: a
 * reader, or a run after a crash, sees the old `target` or the new one, complete. `temp` must be in target's folder;
 * a write that fails removes it. The snapshot manifest and the credentials file are both replaced this way.
 */
export function writeFileDurable(target: string, temp: string, data: string, mode = 0o644): void {
  try {
    const fd = fs.openSync(temp, 'w', mode);
    try {
      fs.writeFileSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, target);
  } catch (e) {
    try {
      fs.rmSync(temp, { force: true });
    } catch {
      // The write's own error is the one to report; a temporary left behind is only litter.
    }
    throw e;
  }
  fsyncDir(dirname(target));
}

/**
 * Writes a file that is only ever created, not replaced (a note read by the next run), and makes it and its entry
 * durable before returning: what the caller does next may rely on the note surviving a crash.
 */
export function createFileDurable(path: string, data: string): void {
  const fd = fs.openSync(path, 'w');
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fsyncDir(dirname(path));
}

/**
 * Renames, then fsyncs the folder the name now lives in. Not the folder it left: every caller moves a temporary, and a
 * crash that brings the temporary's old name back only leaves a temporary for the next write to remove.
 */
export function renameDurable(from: string, to: string): void {
  fs.renameSync(from, to);
  fsyncDir(dirname(to));
}

/** Removes a file or folder and fsyncs its parent, so a crash cannot bring the entry back. */
export function removeDurable(path: string): void {
  fs.rmSync(path, { recursive: true, force: true });
  fsyncDir(dirname(path));
}

/**
 * `mkdir -p`, then fsyncs the parent of every folder it created, outermost first, so files later made durable
 * inside are not lost with a folder entry the disk never got.
 */
export function mkdirDurable(dir: string): void {
  const first = fs.mkdirSync(dir, { recursive: true });
  if (first === undefined) return;
  const created: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    created.unshift(d);
    if (d === resolve(first) || dirname(d) === d) break;
  }
  for (const d of created) fsyncDir(dirname(d));
}
