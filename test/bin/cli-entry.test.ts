/** Which code the CLI runs: the build in dist/ only while no source file is newer than it. */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compiledIsFresh } from '../../bin/cli-entry.js';
import { tempDir } from '../support/temp-dir.ts';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ path: root, remove: cleanup } = await tempDir('gf-cli-entry-')));
afterEach(async () => cleanup());

/** A checkout with the given files, each with its modification time in seconds. */
function checkout(files: Record<string, number>): string {
  for (const [path, mtime] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, '');
    utimesSync(full, mtime, mtime);
  }
  return root;
}

describe('compiledIsFresh', () => {
  it('takes a build made after every source', () => {
    expect(compiledIsFresh(checkout({ 'src/cli/main.ts': 100, 'src/a/b/c.ts': 200, 'dist/cli/main.js': 300 }))).toBe(
      true,
    );
  });

  it('falls back to the sources when any of them, however deep, was edited after the build', () => {
    expect(compiledIsFresh(checkout({ 'src/cli/main.ts': 100, 'src/a/b/c.ts': 400, 'dist/cli/main.js': 300 }))).toBe(
      false,
    );
  });

  it('falls back to the sources when there is no build', () => {
    expect(compiledIsFresh(checkout({ 'src/cli/main.ts': 100 }))).toBe(false);
  });

  it('ignores files that are not TypeScript sources', () => {
    expect(compiledIsFresh(checkout({ 'src/cli/main.ts': 100, 'src/notes.md': 900, 'dist/cli/main.js': 300 }))).toBe(
      true,
    );
  });
});
