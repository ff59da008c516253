#!/usr/bin/env node
// `npm run build` (and `prepare`, which `npm ci` runs): compiles src/ into dist/ for the CLI. An install without dev
// dependencies has no TypeScript compiler; that is not an error: the CLI then runs the sources through tsx.
//
// Two steps: tsc emits one JavaScript file per module (which the replay worker and the benchmark children import),
// then esbuild joins the CLI's modules and its pure-JavaScript dependencies into dist/cli/main.js, with what is
// imported lazily (S3, the report) in chunks of its own under dist/chunks/. The CLI loaded ~1,000 small modules at
// every start; the joined file starts with about a quarter less CPU (docs/architecture.md).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);
let tsc;
let esbuild;
try {
  tsc = require.resolve('typescript/bin/tsc');
  esbuild = await import('esbuild');
} catch {
  console.log(
    'grantflow build: TypeScript or esbuild is not installed (no dev dependencies); the CLI will run the sources through tsx',
  );
  process.exit(0);
}

/** A partial dist/ must not be taken for a build. */
function fail(message) {
  rmSync(dist, { recursive: true, force: true });
  console.error(`grantflow build: ${message}`);
  process.exit(1);
}

rmSync(dist, { recursive: true, force: true });
try {
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
} catch {
  fail('the TypeScript build failed (errors above)'); // tsc has printed them
}
try {
  await esbuild.build({
    entryPoints: { 'cli/main': join(dist, 'cli', 'main.js') },
    outdir: dist,
    allowOverwrite: true,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // A native addon, an optional native driver, and large packages only some commands import.
    external: ['@duckdb/node-api', 'pg-native', '@aws-sdk/*', 'vega', 'vega-lite', 'playwright-core'],
    // Bundled CommonJS packages call require() for Node's own modules.
    banner: {
      js: "import { createRequire as grantflowCreateRequire } from 'node:module'; const require = grantflowCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
} catch {
  fail('bundling the CLI failed (errors above)'); // esbuild has printed them
}
