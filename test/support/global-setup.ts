/**
 * Vitest global setup: resolves the suite's PostgreSQL once (see postgres-server.ts), hands its URL to every test file
 * (`inject('postgresUrl')` in postgres.ts) and stops a server it started when the run ends.
 */
import type { TestProject } from 'vitest/node';
import { findTestPostgres } from './postgres-server.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await findTestPostgres();
  const shown = new URL(postgres.url);
  shown.password = shown.password ? '***' : '';
  console.log(`tests use PostgreSQL from ${postgres.source}: ${shown.toString()}`);
  project.provide('postgresUrl', postgres.url);
  return postgres.stop;
}
