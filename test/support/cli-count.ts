/**
 * Counts the CLI processes the suite starts: each start appends its test file's path to a file of this worker's own
 * (no two processes write one file) in the folder the global setup provides, which sums them up when the run ends.
 * A CLI start costs about a second of CPU before it does anything, so the count is a figure the suite keeps low.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, inject } from 'vitest';
import { packageRoot } from '../../src/util/package-root.ts';

/** Records one CLI start for the running test file; called by every helper that spawns `bin/grantflow.js`. */
export function countCliStart(): void {
  const dir = inject('cliCountDir');
  if (!dir) return; // `npm run test:unit` has no global setup (and starts no process)
  const file = expect.getState().testPath;
  appendFileSync(join(dir, `${process.pid}.txt`), `${file ? relative(packageRoot, file) : 'unknown'}\n`);
}

/** Every start the workers recorded in `dir`, per test file, most first. */
export function cliStartsPerFile(dir: string): [file: string, starts: number][] {
  const perFile = new Map<string, number>();
  for (const name of readdirSync(dir)) {
    for (const file of readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean)) {
      perFile.set(file, (perFile.get(file) ?? 0) + 1);
    }
  }
  return [...perFile].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}
