import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding grantflow's package.json: where sql/, models/, pipelines/ and docs/ ship. Found by walking up
 * from this module, because the module sits at different depths in the sources and in the one-file CLI build.
 */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'grantflow')
      return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`grantflow's package.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export const packageRoot = findPackageRoot();

/** A path inside the package, e.g. `packagePath('models')`. */
export const packagePath = (...segments: string[]): string => join(packageRoot, ...segments);

/** The CLI as a user starts it: what the tests and the benchmark spawn. */
export const cliPath = packagePath('bin/grantflow.js');
