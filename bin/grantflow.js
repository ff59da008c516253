#!/usr/bin/env node
// Runs the TypeScript sources through tsx so a fresh clone works after `npm ci` alone, with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
