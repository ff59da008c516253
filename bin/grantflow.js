#!/usr/bin/env node
// Runs the compiled CLI when its build is current (see cli-entry.js), else the TypeScript sources through tsx, so a
// fresh clone works after `npm ci` alone and an edited checkout runs what it holds.
import { fileURLToPath } from 'node:url';
import { compiledIsFresh } from './cli-entry.js';

const root = fileURLToPath(new URL('..', import.meta.url));
if (compiledIsFresh(root)) {
  await import('../dist/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
