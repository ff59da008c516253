/**
 * A sync whose extract and models succeed but whose snapshots cannot be written (here a file stands where a table's
 * snapshot folder goes; on a server, a full disk): the run ends `partial` with the reason (exit 1), is recorded as
 * finished rather than left `running`, and the manifest keeps naming the last good snapshot.
 */
import { mkdirSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { siteWithWarehouse, syncCliArgs } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

let site: Awaited<ReturnType<typeof siteWithWarehouse>>;
beforeAll(async () => {
  site = await siteWithWarehouse();
});
afterAll(async () => site?.remove());

it('a snapshot that cannot be written ends the run partial and recorded, not running', async () => {
  const snapshots = join(site.dir, 'snapshots');
  mkdirSync(snapshots, { recursive: true });
  writeFileSync(join(snapshots, 'applications'), 'not a folder');
  const args = syncCliArgs(site.sim.url, site.dir, { snapshot: true });
  const r = await runCliInProcess(args);
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).not.toMatch(/a bug/);
  expect(r.stdout).toMatch(/snapshots: FAILED: .*applications/);
  expect(r.stdout.split('the manifest still names the last good snapshot')).toHaveLength(2);
  expect(existsSync(join(snapshots, '_manifest.json'))).toBe(false);
  // The tables written before the failing one left no snapshot= folder behind (a glob over the folders finds none).
  const folders = readdirSync(snapshots, { recursive: true, encoding: 'utf8' }).filter((f) => /snapshot=/.test(f));
  expect(folders).toEqual([]);

  const warehouse = await openWarehouse(join(site.dir, 'warehouse.duckdb'), { logger: silentLogger });
  try {
    const [run] = await warehouse.listRuns(1);
    expect(run?.status).toBe('partial');
    expect(run?.finishedAt).toBeTruthy();
    expect(JSON.stringify(run?.summary)).toMatch(/snapshotError.*applications/);
  } finally {
    await warehouse.close();
  }
  const status = await runCliInProcess(['status', '--warehouse', join(site.dir, 'warehouse.duckdb')]);
  expect(status.stdout).toMatch(/ partial /);
  expect(status.stdout).not.toMatch(/ running /);
  // ... and says why under the run.
  expect(status.stdout).toMatch(/ partial .*\n\s+why: snapshots failed: .*applications/);
}, 120_000);
