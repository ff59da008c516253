import { readdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { settingsSchema } from '../../src/config/settings.ts';
import { afterLoad } from '../../src/pipeline/after-load.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { loadSmallSite, openTestWarehouse } from '../support/model-fixtures.ts';
import { tempDir } from '../support/temp-dir.ts';

it('a model that cannot be built fails the run with the reason and writes no snapshot', async () => {
  const t = await openTestWarehouse('duckdb', 'afterload');
  const { path: snapshots, remove: cleanup } = await tempDir('gf-afterload-');
  try {
    await loadSmallSite(t.warehouse);
    // Models read stages; a warehouse without it cannot build them.
    await t.warehouse.exec('DROP TABLE stages');
    const settings = settingsSchema.parse({ site: 'http://127.0.0.1:1', snapshots, models: true, snapshot: true });
    const after = await afterLoad(t.warehouse, settings, 'run-1', false, silentLogger);
    expect(after.failed).toBe(true);
    expect(after.lines.find((l) => l.startsWith('models:'))).toMatch(/FAILED: .*stages/);
    expect(after.lines).toContain('snapshots: not written (a model failed; the last good snapshot stays current)');
    expect(JSON.stringify(after.summary)).toMatch(/modelError.*stages/);
    expect(readdirSync(snapshots)).toEqual([]);
  } finally {
    await t.cleanup();
    await cleanup();
  }
});

it('a data test whose query cannot run is reported with the reason, not as 0 failing rows', async () => {
  const t = await openTestWarehouse('duckdb', 'afterload');
  try {
    await loadSmallSite(t.warehouse);
    // No model reads teams; the generated tests of teams can no longer run.
    await t.warehouse.exec('DROP TABLE teams');
    const settings = settingsSchema.parse({ site: 'http://127.0.0.1:1', models: true, snapshot: false });
    const after = await afterLoad(t.warehouse, settings, 'run-1', false, silentLogger);
    expect(after.failed).toBe(true);
    const line = after.lines.find((l) => l.includes('FAIL unique:teams(id)'));
    expect(line).toMatch(/query failed: .*teams/);
  } finally {
    await t.cleanup();
  }
});
