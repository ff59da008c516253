/**
 * Issue 4 acceptance: the same sync gives the same tables in DuckDB and Postgres; loading the same pages again
 * changes nothing; the data tests hold on real synced data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readdir } from 'node:fs/promises';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { runReplay } from '../../src/pipeline/replay.ts';
import { RawLanding } from '../../src/extract/raw-landing.ts';
import { runDataTests } from '../../src/models/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import {
  clockModels,
  dumpWarehouse,
  modelNames,
  postgresSchema,
  startSite,
  summarize,
  syncOnce,
  tempDir,
  writeCredentials,
} from '../support/harness.ts';

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let pgTarget: Awaited<ReturnType<typeof postgresSchema>>;
let duckPath: string;
let runId: string;

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 17 });
  dir = await tempDir();
  pgTarget = await postgresSchema();
  duckPath = join(dir.path, 'w.duckdb');
  const credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  const duck = await syncOnce(sim, { credentials, warehouse: duckPath, landRaw: true, rawDir: join(dir.path, 'raw') });
  expect(duck.status).toBe('succeeded');
  runId = duck.runId;
  const pgResult = await syncOnce(sim, { credentials, warehouse: pgTarget.url, schema: pgTarget.schema });
  expect(pgResult.status).toBe('succeeded');
});
afterAll(async () => {
  await sim.close();
  await pgTarget.drop();
  await dir.remove();
});

describe('DuckDB and Postgres', () => {
  it('hold equal content in every table and model after the same sync', async () => {
    const models = modelNames.filter((m) => !clockModels.has(m));
    const duck = await dumpWarehouse(duckPath, { models });
    const postgres = await dumpWarehouse(pgTarget.url, { schema: pgTarget.schema, models });
    expect(Object.keys(duck).length).toBeGreaterThan(30);
    expect(duck.applications!.rows).toBeGreaterThan(0);
    expect(summarize(postgres)).toEqual(summarize(duck));
    // Cell by cell for one wide table, so a difference is readable when it happens.
    expect(postgres.applications!.content).toEqual(duck.applications!.content);
  });

  it('pass every error-level data test (keys unique, references resolve, _raw present) in both', async () => {
    for (const [target, schema] of [
      [duckPath, undefined],
      [pgTarget.url, pgTarget.schema],
    ] as const) {
      const warehouse = await openWarehouse(target, { schema, logger: silentLogger });
      try {
        const results = await runDataTests(warehouse);
        expect(results.length).toBeGreaterThan(50);
        const kinds = results.map((r) => r.name).join(' ');
        expect(kinds).toMatch(/unique/);
        expect(kinds).toMatch(/relationship|references/);
        expect(kinds).toMatch(/raw_present/);
        const failing = results.filter((r) => r.severity === 'error' && r.status !== 'pass');
        expect(failing.map((r) => `${r.name}: ${r.message ?? r.failing}`)).toEqual([]);
      } finally {
        await warehouse.close();
      }
    }
  });
});

describe('loading the same pages again', () => {
  it('the raw pages of the run replay into a fresh warehouse as the same tables', async () => {
    expect((await readdir(join(dir.path, 'raw', runId))).length).toBeGreaterThan(10);
    const fresh = join(dir.path, 'replayed.duckdb');
    const warehouse = await openWarehouse(fresh, { logger: silentLogger });
    try {
      await runReplay({ warehouse, rawDir: join(dir.path, 'raw'), runId, siteTimeZone: 'UTC' });
    } finally {
      await warehouse.close();
    }
    expect(summarize(await dumpWarehouse(fresh))).toEqual(summarize(await dumpWarehouse(duckPath)));
  });

  it('a replay normalising on the main thread gives the same tables as one through the worker thread', async () => {
    const targets = { worker: join(dir.path, 'replay-worker.duckdb'), main: join(dir.path, 'replay-main.duckdb') };
    for (const [how, target] of Object.entries(targets)) {
      const warehouse = await openWarehouse(target, { logger: silentLogger });
      try {
        const infos = await runReplay({
          warehouse,
          rawDir: join(dir.path, 'raw'),
          runId,
          siteTimeZone: 'UTC',
          normaliseInWorker: how === 'worker',
        });
        expect(infos.reduce((a, i) => a + i.records, 0)).toBeGreaterThan(100);
      } finally {
        await warehouse.close();
      }
    }
    expect(summarize(await dumpWarehouse(targets.worker))).toEqual(summarize(await dumpWarehouse(targets.main)));
  });

  it('a page that cannot be read fails the replay with the stream named, commits nothing of that stream and gives DuckDB its threads back', async () => {
    const raw = join(dir.path, 'raw-corrupt');
    const landing = new RawLanding(join(raw, 'bad-run'));
    await landing.open();
    const page = (body: string) =>
      ({
        type: 'page',
        url: 'https://site.test/api/programs/',
        status: 200,
        fetchedAt: '2024-01-01T00:00:00Z',
        body,
      }) as const;
    landing.write('programs', page(JSON.stringify({ count: 1, next: null, results: [{ id: 1, name: 'ok' }] })));
    landing.write('programs', page('{"count": 2, "results": [tru'));
    landing.write('programs', { type: 'walk_end', complete: true });
    await landing.close();
    const target = join(dir.path, 'replay-corrupt.duckdb');
    const warehouse = await openWarehouse(target, { logger: silentLogger });
    const threads = () => warehouse.query(`SELECT current_setting('threads') AS n`);
    try {
      const threadsBefore = await threads();
      await expect(runReplay({ warehouse, rawDir: raw, runId: 'bad-run', siteTimeZone: 'UTC' })).rejects.toThrow(
        /replay of programs: raw page of https:\/\/site\.test\/api\/programs\/ cannot be read/,
      );
      expect(await warehouse.query('SELECT count(*) AS n FROM programs')).toEqual([{ n: 0 }]);
      // The threads DuckDB gave up to the replay's JavaScript are back.
      expect(await threads()).toEqual(threadsBefore);
    } finally {
      await warehouse.close();
    }
  });

  it('replaying twice over the synced warehouse leaves every table unchanged', async () => {
    const before = summarize(await dumpWarehouse(duckPath));
    for (let i = 0; i < 2; i++) {
      const warehouse = await openWarehouse(duckPath, { logger: silentLogger });
      try {
        await runReplay({ warehouse, rawDir: join(dir.path, 'raw'), runId, siteTimeZone: 'UTC' });
      } finally {
        await warehouse.close();
      }
      expect(summarize(await dumpWarehouse(duckPath))).toEqual(before);
    }
  });
});
