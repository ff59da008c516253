/** Raw pages are kept for `keepRawRuns` runs; older run folders go after a successful sync, never an unfinished run's. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { existsSync } from 'node:fs';

import { mkdir, readdir, writeFile } from 'node:fs/promises';

import { join } from 'node:path';

import { newRunId } from '../../src/pipeline/run-id.ts';

import { pruneRawAfterSync } from '../../src/pipeline/raw-retention-step.ts';

import { silentLogger } from '../../src/util/logger.ts';

import { openWarehouse } from '../../src/warehouse/index.ts';

import type { RunRecord } from '../../src/warehouse/types.ts';

import { siteWithWarehouse, syncOnce } from '../support/harness.ts';
import { tables } from '../../src/streams/registry.ts';

let site: Awaited<ReturnType<typeof siteWithWarehouse>>;
beforeAll(async () => {
  site = await siteWithWarehouse({ seed: 30 });
});
afterAll(async () => {
  await site.remove();
});

describe('raw page retention', () => {
  it('keeps the raw pages of the newest keepRawRuns runs, and leaves other folders under the raw dir alone', async () => {
    const { sim, credentials, dir } = site;
    const rawDir = join(dir, 'raw');
    const warehouse = join(dir, 'kept.duckdb');
    await mkdir(join(rawDir, 'my-notes'), { recursive: true });
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await syncOnce(sim, { credentials, warehouse, landRaw: true, rawDir, keepRawRuns: 2 });
      expect(result.status).toBe('succeeded');
      runIds.push(result.runId);
    }
    expect((await readdir(rawDir)).sort()).toEqual([...runIds.slice(1), 'my-notes'].sort());
    // The runs kept still replay: their pages are whole.
    expect((await readdir(join(rawDir, runIds[2]!))).some((f) => f.startsWith('applications.'))).toBe(true);
  });

  it('never prunes the current run or one a resume may continue (running, interrupted, resumable failure)', async () => {
    const rawDir = join(site.dir, 'raw-unfinished');
    const warehouse = await openWarehouse(join(site.dir, 'unfinished.duckdb'), { logger: silentLogger });
    try {
      await warehouse.acquireLock('test');
      await warehouse.migrate(tables);
      // Run ids sort by their start: these are older than the current one, oldest first.
      const at = (minutes: number): Date => new Date(Date.UTC(2026, 0, 1, 0, minutes));
      const [killed, interrupted, resumable, failed, done, current] = [0, 1, 2, 3, 4, 5].map((m) => newRunId(at(m)));
      const rows: Omit<RunRecord, 'startedAt'>[] = [
        { runId: killed!, status: 'running' },
        { runId: interrupted!, status: 'interrupted' },
        { runId: resumable!, status: 'failed', summary: { resumable: true } },
        { runId: failed!, status: 'failed', summary: { error: 'HTTP 500' } },
        { runId: done!, status: 'succeeded' },
      ];
      for (const row of rows) await warehouse.saveRun({ startedAt: '2026-01-01T00:00:00.000Z', ...row });
      for (const id of [killed, interrupted, resumable, failed, done, current]) {
        await mkdir(join(rawDir, id!), { recursive: true });
        await writeFile(join(rawDir, id!, 'applications.jsonl.gz'), '');
      }
      // keepRawRuns 1: only the current run's folder counts as recent.
      await pruneRawAfterSync(warehouse, { landRaw: true, rawDir, keepRawRuns: 1 }, current!, silentLogger);
      expect((await readdir(rawDir)).sort()).toEqual([killed, interrupted, resumable, current].sort());
      expect(existsSync(join(rawDir, failed!))).toBe(false);
      expect(existsSync(join(rawDir, done!))).toBe(false);
    } finally {
      await warehouse.close();
    }
  });
});
