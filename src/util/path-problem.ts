import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The nearest existing ancestor of `path` (or `path` itself) that is not a directory: the regular file that stops a
 * directory from being created there. Undefined when there is none.
 */
export function fileInTheWay(path: string): string | undefined {
  for (let p = resolve(path); ; p = dirname(p)) {
    try {
      return statSync(p).isDirectory() ? undefined : p;
    } catch {
      if (dirname(p) === p) return undefined;
    }
  }
}

/** Whether `path` is an existing directory (false for anything else, and when it cannot be looked at). */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Why `path` could not be read, written or created, in words (the errno and Node's message mean little to most
 * users and name a temporary file rather than theirs). `path` lets a "not a directory" name the file in the way.
 */
export function pathProblem(e: unknown, path?: string): string {
  const err = e as NodeJS.ErrnoException;
  switch (err.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
    case 'EEXIST': {
      const file = path === undefined ? undefined : fileInTheWay(path);
      // mkdir -p over a regular file fails with EEXIST: a file in the way, as ENOTDIR is.
      return file === undefined ? 'a file is in the way of the directory' : `${file} is a file, not a directory`;
    }
    case 'EISDIR':
      return 'it is a directory, not a file';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'ENAMETOOLONG':
      return 'the name is too long';
    default:
      return err.message?.split('\n')[0] ?? String(e);
  }
}
