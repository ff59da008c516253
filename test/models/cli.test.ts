import { clusterName, postgresUrl } from '../support/postgres.ts';

import { existsSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openWarehouse } from '../../src/warehouse/index.ts';
import { loadModels } from '../../src/models/index.ts';

import { loadSmallSite } from '../support/model-fixtures.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import type { CliResult } from '../support/harness.ts';
import { tempDir } from '../support/temp-dir.ts';
import { tables } from '../../src/streams/registry.ts';

/** The commands run in this process: their result and what they print is the subject here, not the process. */
function cli(args: string[]): Promise<CliResult> {
  return runCliInProcess(args, { env: { GRANTFLOW_LOG_LEVEL: 'silent' } });
}

describe('grantflow models / snapshot commands', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let target: string;
  beforeAll(async () => {
    ({ path: dir, remove: cleanup } = await tempDir('gf-cli-models-'));
    target = join(dir, 'warehouse.duckdb');
    const warehouse = await openWarehouse(target);
    await warehouse.migrate(tables);
    await loadSmallSite(warehouse);
    await warehouse.close();
  });
  afterAll(() => cleanup());

  it('models run builds every model, models test passes, snapshot writes Parquet', async () => {
    const run = await cli(['models', 'run', '--warehouse', target]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/award_rates\s+3 rows/);
    expect(run.stdout).toMatch(new RegExp(`${loadModels().length} models built`));
    const test = await cli(['models', 'test', '--warehouse', target]);
    expect(test.code, test.stdout).toBe(0);
    expect(test.stdout).toMatch(/PASS {2}unique:applications\(id\)/);
    expect(test.stdout).toMatch(/\d+ passed, 0 failed, 0 warnings/);
    const snap = await cli(['snapshot', '--warehouse', target, '--snapshots', join(dir, 'snaps'), '--retain', '2']);
    expect(snap.code, snap.stderr).toBe(0);
    expect(existsSync(join(dir, 'snaps', '_manifest.json'))).toBe(true);
    expect(snap.stdout).toMatch(/award_rates\s+3 rows/);
  });

  it('models test exits 1 on an error-level failure and prints it', async () => {
    const warehouse = await openWarehouse(target);
    await warehouse.exec('UPDATE assignments SET reviewer_id = 4242 WHERE application_id = 101 AND reviewer_id = 5');
    await warehouse.close();
    const test = await cli(['models', 'test', '--warehouse', target]);
    expect(test.code).toBe(1);
    expect(test.stdout).toMatch(/FAIL {2}relationship:assignments\.reviewer_id->users\.id .*4242/);
  });

  it('models and snapshot wait for no one: while a sync holds a Postgres warehouse they exit 1 naming it', async () => {
    const url = postgresUrl;
    const schema = clusterName('cli_locked');
    const holder = await openWarehouse(url, { schema });
    try {
      await holder.migrate(tables);
      await holder.acquireLock('grantflow sync (pid 4242)');
      const common = ['--warehouse', url, '--schema', schema];
      for (const args of [
        ['models', 'run', ...common],
        ['snapshot', ...common, '--snapshots', join(dir, 'locked')],
      ]) {
        const r = await cli(args);
        expect(r.code, args[0]).toBe(1);
        expect(r.stderr.trim(), args[0]).toMatch(/^grantflow: .* is in use by another grantflow run \(.*pid 4242/);
      }
    } finally {
      await holder.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await holder.close();
    }
  });

  it('a bad warehouse target or snapshot dir is a configuration error (exit 2)', async () => {
    writeFileSync(join(dir, 'plain-file'), 'x');
    const badDuck = await cli(['models', 'run', '--warehouse', join(dir, 'plain-file', 'w.duckdb')]);
    expect(badDuck.code).toBe(2);
    expect(badDuck.stderr).toMatch(/^grantflow: /);
    const badPg = await cli(['models', 'test', '--warehouse', 'postgres://nobody@127.0.0.1:1/none']);
    expect(badPg.code).toBe(2);
    expect(badPg.stderr).toMatch(/cannot connect to Postgres/);
    const badDir = await cli(['snapshot', '--warehouse', target, '--snapshots', join(dir, 'plain-file', 'snaps')]);
    expect(badDir.code).toBe(2);
    expect(badDir.stderr).toMatch(/snapshot directory .* is not writable/);
  });
});
