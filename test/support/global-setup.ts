/**
 * Vitest global setup: resolves the suite's PostgreSQL once (see postgres-server.ts), hands its URL to every test file
 * (`inject('postgresUrl')` in postgres.ts) and stops a server it started when the run ends; and gives the run a fresh
 * folder where reference syncs are kept for the files that ask for the same one (referenceDump in harness.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { findTestPostgres } from './postgres-server.ts';

/** What this setup provides to every test file; neither is there in `npm run test:unit`, which has no global setup. */
declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl?: string;
    referenceCacheDir?: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await findTestPostgres();
  const shown = new URL(postgres.url);
  shown.password = shown.password ? '***' : '';
  console.log(`tests use PostgreSQL from ${postgres.source}: ${shown.toString()}`);
  project.provide('postgresUrl', postgres.url);
  const references = await mkdtemp(join(tmpdir(), 'grantflow-test-references-'));
  project.provide('referenceCacheDir', references);
  return async () => {
    await postgres.stop();
    await rm(references, { recursive: true, force: true });
  };
}
