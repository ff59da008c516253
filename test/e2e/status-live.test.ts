/** `status` while a sync holds the DuckDB file: the progress the run publishes, not a refusal. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { liveProgressPath } from '../../src/pipeline/live-progress-file.ts';
import { runCli, startSite, syncCliArgs, tempDir, writeCredentials } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 28 });
  dir = await tempDir();
  await writeCredentials(sim, join(dir.path, 'creds.json'));
});
afterAll(async () => {
  await sim.close();
  await dir.remove();
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1200 && !condition(); i++) await sleep(50);
  expect(condition()).toBe(true);
}

describe('status during a DuckDB sync', () => {
  it('shows the running sync and its progress, naming its pid once; after it, the warehouse as usual', async () => {
    const warehouse = join(dir.path, 'warehouse.duckdb');
    let pid = 0;
    // A slow rate keeps the sync holding the file while status runs; it is stopped by SIGTERM after.
    const sync = runCli(syncCliArgs(sim.url, dir.path, { rate: 5 }), {
      onSpawn: (child) => (pid = child.pid ?? 0),
    });
    await until(() => existsSync(liveProgressPath(warehouse)) && existsSync(`${warehouse}.lock`));

    const status = await runCliInProcess(['status', '--warehouse', warehouse]);
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(status.stdout.match(/pid \d+/g)).toEqual([`pid ${pid}`]);
    expect(status.stdout).toMatch(/is held by a running sync \(pid \d+, run \S+, started /);
    expect(status.stdout).toMatch(/^grantflow sync {2}requests [\d,]+\/~[\d,]+ \(\d+%\) {2}[\d.]+\/s {2}ETA /m);

    process.kill(pid, 'SIGTERM');
    expect((await sync).code).toBe(1);
    // The run ended: its progress file is gone and status reads the warehouse itself.
    expect(existsSync(liveProgressPath(warehouse))).toBe(false);
    const after = await runCliInProcess(['status', '--warehouse', warehouse]);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/interrupted/);
    expect(after.stdout).not.toMatch(/held by a running sync/);
  });
});
