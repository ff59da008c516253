/**
 * Vitest global setup: resolves the suite's PostgreSQL once (see postgres-server.ts), hands its URL to every test file
 * (`inject('postgresUrl')` in postgres.ts) and stops a server it started when the run ends; finds (or installs) the
 * chromium of the report's browser tests (chromium.ts); and gives the run a fresh folder where reference syncs are kept
 * for the files that ask for the same one (referenceDump in harness.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { findChromium, playwrightChromium } from './chromium.ts';
import { findTestPostgres } from './postgres-server.ts';

/** What this setup provides to every test file; neither is there in `npm run test:unit`, which has no global setup. */
declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl?: string;
    referenceCacheDir?: string;
    /** The browser's executable, or, when there is none, the line saying what to run. */
    chromiumPath?: string;
    chromiumMissing?: string;
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
  return async () => {
    await postgres.stop();
    await rm(references, { recursive: true, force: true });
  };
}
