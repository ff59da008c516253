import { existsSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from './errors.ts';
import { pathProblem } from './path-problem.ts';

/**
 * Pre-flight for a directory a command will write into later: creates it (and its parents) and a probe file, then
 * removes whatever it created, so an unwritable path is a configuration error (exit 2) reported before any work and a
 * failed check leaves nothing behind. `advice` ends the message ("choose another one with --snapshots ...").
 */
export function checkWritableDir(dir: string, what: string, advice: string): void {
  const path = resolve(dir);
  // The outermost directory this check would create, found first: mkdir may create some and then fail.
  let created: string | undefined;
  for (let d = path; !existsSync(d) && dirname(d) !== d; d = dirname(d)) created = d;
  try {
    mkdirSync(path, { recursive: true });
    const probe = join(path, `.grantflow-write-probe-${process.pid}.tmp`);
    writeFileSync(probe, 'ok');
    rmSync(probe, { force: true });
  } catch (e) {
    throw new ConfigError(`${what} ${path} is not writable (${pathProblem(e, path)}); ${advice}`, { cause: e });
  } finally {
    // Only the directories this check made, innermost first; one that gained content meanwhile stays.
    for (let d = path; created !== undefined && d.length >= created.length; d = dirname(d)) {
      try {
        rmdirSync(d);
      } catch (e) {
        // Not made (mkdir failed below it) is fine; content someone else put there stays, with its parents.
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOTEMPTY' || code === 'EEXIST') break;
      }
    }
  }
}
