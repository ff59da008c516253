/**
 * Vitest global setup: resolves the suite's PostgreSQL once (see postgres-server.ts), hands its URL to every test file
 * (`inject('postgresUrl')` in postgres.ts) and stops a server it started when the run ends; finds (or installs) the
 * chromium of the report's browser tests (chromium.ts); and gives the run a fresh folder where reference syncs are kept
 * for the files that ask for the same one (referenceDump in harness.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { findChromium, playwrightChromium } from './chromium.ts';
import { findTestPostgres } from './postgres-server.ts';
import { cliStartsPerFile } from './cli-count.ts';

/** What this setup provides to every test file; neither is there in `npm run test:unit`, which has no global setup. */
declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl?: string;
    referenceCacheDir?: string;
    /** The browser's executable, or, when there is none, the line saying what to run. */
    chromiumPath?: string;
    chromiumMissing?: string;
    cliCountDir?: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await findTestPostgres();
  const shown = new URL(postgres.url);
  shown.password = shown.password ? '***' : '';
  console.log(`tests use PostgreSQL from ${postgres.source}: ${shown.toString()}`);
  project.provide('postgresUrl', postgres.url);
  const browser = await findChromium({
    env: process.env,
    isRoot: process.getuid?.() === 0,
    packaged: playwrightChromium,
  });
  if ('path' in browser) {
    console.log(`tests use chromium from ${browser.from}: ${browser.path}`);
    project.provide('chromiumPath', browser.path);
  } else {
    console.log(browser.missing);
    project.provide('chromiumMissing', browser.missing);
  }
  const references = await mkdtemp(join(tmpdir(), 'grantflow-test-references-'));
  project.provide('referenceCacheDir', references);
  const cliCounts = await mkdtemp(join(tmpdir(), 'grantflow-test-cli-count-'));
  project.provide('cliCountDir', cliCounts);
  return async () => {
    await postgres.stop();
    await rm(references, { recursive: true, force: true });
    await reportCliStarts(cliCounts);
  };
}

/** Prints how many CLI processes the run started (test/support/cli-count.ts) and keeps the per-file list in .vitest/. */
async function reportCliStarts(dir: string): Promise<void> {
  const perFile = cliStartsPerFile(dir);
  const total = perFile.reduce((sum, [, n]) => sum + n, 0);
  const top = perFile.slice(0, 10).map(([file, n]) => `${file.replace(/^test\//, '')} ${n}`);
  console.log(`CLI processes started: ${total}${top.length ? ` (per file: ${top.join(', ')})` : ''}`);
  await mkdir('.vitest', { recursive: true });
  await writeFile('.vitest/cli-processes.txt', perFile.map(([file, n]) => `${n}\t${file}\n`).join(''));
  await rm(dir, { recursive: true, force: true });
}
