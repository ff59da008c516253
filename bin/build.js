#!/usr/bin/env node
// `npm run build` (and `prepare`, which `npm ci` runs): compiles src/ into dist/ for the CLI. An install without dev
// dependencies has no TypeScript compiler; that is not an error: the CLI then runs the sources through tsx.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.log(
    'grantflow build: TypeScript is not installed (no dev dependencies); the CLI will run the sources through tsx',
  );
  process.exit(0);
}
rmSync(dist, { recursive: true, force: true });
try {
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
} catch {
  // tsc has printed the errors; a partial dist/ must not be taken for a build.
  rmSync(dist, { recursive: true, force: true });
  console.error('grantflow build: the TypeScript build failed (errors above)');
  process.exit(1);
}
