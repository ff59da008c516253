// Which code the CLI runs: the compiled build in dist/ when it is at least as new as every TypeScript source, else
// the sources through tsx. The build (`npm run build`, run by `npm ci` through `prepare`) starts in ~0.7 s instead of
// ~1.2 s and holds ~55 MB less per process (docs/architecture.md); the fallback means an edit in src/ is never shadowed by a stale build.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The newest modification time (ms) of the `.ts` files under `dir`, or 0 if there are none. */
function newestSource(dir) {
  let newest = 0;
  for (const name of readdirSync(dir, { recursive: true })) {
    if (String(name).endsWith('.ts')) newest = Math.max(newest, statSync(join(dir, String(name))).mtimeMs);
  }
  return newest;
}

/** Whether `root`/dist holds a build of `root`/src that no source file is newer than. */
export function compiledIsFresh(root) {
  let built;
  try {
    built = statSync(join(root, 'dist', 'cli', 'main.js')).mtimeMs;
  } catch {
    return false;
  }
  return newestSource(join(root, 'src')) <= built;
}
