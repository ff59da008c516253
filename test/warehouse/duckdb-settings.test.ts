import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { defaultDuckDBMemoryLimit, minDuckDBMemoryLimit } from '../../src/config/settings.ts';
import { siteWithWarehouse, syncOnce, tempDir } from '../support/harness.ts';
import { openWarehouse, type OpenWarehouseOptions } from '../../src/warehouse/index.ts';
import { DuckDBInstance } from '@duckdb/node-api';

const { path: dir, remove: cleanup } = await tempDir('gf-duck-settings-');
afterAll(() => cleanup());

async function settingOf(target: string, name: string, options: OpenWarehouseOptions = {}): Promise<unknown> {
  const wh = await openWarehouse(target, options);
  try {
    const [row] = await wh.query(`SELECT current_setting('${name}') AS v`);
    return row?.v;
  } finally {
    await wh.close();
  }
}

/** DuckDB reports sizes in binary units: 256MB reads back as 244.1 MiB. */
const mib = (size: string): string => {
  const bytes = Number(/^\d+/.exec(size)![0]) * 1000 ** 2;
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
};

describe('DuckDB instance settings', () => {
  it('bounds DuckDB memory by default and by the duckdbMemoryLimit setting', async () => {
    expect(await settingOf(join(dir, 'default.duckdb'), 'memory_limit')).toBe(mib(defaultDuckDBMemoryLimit));
    expect(await settingOf(join(dir, 'set.duckdb'), 'memory_limit', { duckdbMemoryLimit: '300MB' })).toBe(mib('300MB'));
  });

  it('a whole sync (models and snapshots too) succeeds at the smallest memory limit the settings accept', async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 5 });
    try {
      const result = await syncOnce(site.sim, {
        credentials: site.credentials,
        warehouse: site.warehouse,
        duckdbMemoryLimit: minDuckDBMemoryLimit,
        snapshot: true,
        snapshots: join(site.dir, 'snapshots'),
      });
      expect(result.status).toBe('succeeded');
      expect(await settingOf(site.warehouse, 'memory_limit', { duckdbMemoryLimit: minDuckDBMemoryLimit })).toBe(
        mib(minDuckDBMemoryLimit),
      );
    } finally {
      await site.remove();
    }
  });

  it("runs DuckDB on the duckdbThreads setting's threads, and on DuckDB's own default without it", async () => {
    const bare = await DuckDBInstance.create(':memory:');
    const connection = await bare.connect();
    const duckdbDefault = (await connection.runAndReadAll(`SELECT current_setting('threads') AS v`)).getRowObjects()[0]
      ?.v;
    connection.closeSync();
    bare.closeSync();
    expect(await settingOf(join(dir, 'threads-default.duckdb'), 'threads')).toBe(Number(duckdbDefault));
    expect(await settingOf(join(dir, 'threads-one.duckdb'), 'threads', { duckdbThreads: 1 })).toBe(1);
  });

  it('checkpoints a load by WAL size well above DuckDB default of 16 MB', async () => {
    const value = String(await settingOf(join(dir, 'ckpt.duckdb'), 'checkpoint_threshold'));
    expect(value).toMatch(/GiB|MiB/);
    expect(value).not.toBe('16.0 MiB');
  });

  it('a bulk load that fails reports its own error, even when its threads cannot be restored after it', async () => {
    const wh = await openWarehouse(join(dir, 'bulk.duckdb'));
    // Closing the warehouse inside the load makes restoring DuckDB's threads fail too.
    await expect(
      wh.whileBulkLoading(async () => {
        await wh.close();
        throw new Error('the load failed');
      }),
    ).rejects.toThrow('the load failed');
  });
});
