/**
 * The requests a sync announces it expects (`about N requests expected`, logged once every stream's size is known)
 * are within 15 % of the requests the simulator then served, for a first sync, an incremental one, a
 * `--full-refresh` (every parent read again) and a sync after `reset` of one fan-out stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingsSchema, type SettingsInput } from '../../src/config/settings.ts';
import { resetStreams } from '../../src/pipeline/reset-streams.ts';
import { runSync } from '../../src/pipeline/sync.ts';
import { streamByName } from '../../src/streams/registry.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { capturingLogger, postgresSchema, siteWithWarehouse } from '../support/harness.ts';
import { suiteDuckdbThreads } from '../support/suite-duckdb.ts';

const tolerance = 0.15;
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe.each(['duckdb', 'postgres'] as const)('the announced request estimate (%s)', (engine) => {
  const runs: { label: string; announced: number | undefined; served: number }[] = [];

  beforeAll(async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 7 });
    cleanup.push(site.remove);
    let target: { warehouse: string; schema?: string } = { warehouse: site.warehouse };
    if (engine === 'postgres') {
      const pg = await postgresSchema();
      cleanup.push(pg.drop);
      target = { warehouse: pg.url, schema: pg.schema };
    }
    const sync = async (label: string, extra: SettingsInput = {}): Promise<void> => {
      const { logger, lines } = capturingLogger();
      const before = site.sim.control.counts().total;
      const result = await runSync({
        settings: settingsSchema.parse({
          site: site.sim.url,
          credentials: site.credentials,
          ...target,
          // Slow enough for the live view to tick while the fan-out streams run.
          rate: 100,
          snapshot: false,
          landRaw: false,
          models: false,
          duckdbThreads: suiteDuckdbThreads,
          ...extra,
        }),
        logger,
        env: {},
        tty: false,
      });
      expect(result.status).toBe('succeeded');
      const announced = lines.filter((l) => /requests expected$/.test(String(l.msg)));
      expect(announced.length).toBeLessThanOrEqual(1);
      runs.push({
        label,
        announced: announced[0]?.requests as number | undefined,
        served: site.sim.control.counts().total - before,
      });
    };
    await sync('first sync');
    await sync('incremental sync');
    await sync('--full-refresh', { fullRefresh: true });
    const warehouse = await openWarehouse(target.warehouse, target.schema ? { schema: target.schema } : {});
    try {
      await warehouse.acquireLock('progress-estimate test');
      await resetStreams(warehouse, [streamByName('application_tasks')!]);
    } finally {
      await warehouse.close();
    }
    await sync('after reset of application_tasks');
  }, 240_000);

  it.each(['first sync', 'incremental sync', '--full-refresh', 'after reset of application_tasks'])(
    '%s: within 15 % of the requests served',
    (label) => {
      const run = runs.find((r) => r.label === label)!;
      expect(run.announced).toBeTypeOf('number');
      expect(Math.abs(run.announced! - run.served)).toBeLessThanOrEqual(tolerance * run.served);
    },
  );

  it('the runs differ enough that one estimate for all would fail', () => {
    const served = runs.map((r) => r.served);
    expect(Math.max(...served)).toBeGreaterThan(2 * Math.min(...served));
  });
});
