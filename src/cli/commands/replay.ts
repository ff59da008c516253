import type { Command } from 'commander';
import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';
import { rawRunDir, runReplay } from '../../pipeline/replay.ts';
import { promotionsOf } from '../../pipeline/promote-step.ts';
import { openConfiguredWarehouse } from '../../warehouse/index.ts';
import { createLogger } from '../../util/logger.ts';
import { runAction } from '../run-action.ts';
import { addSettings, settingsFrom } from '../settings-options.ts';
import { renderTable, unitColumns } from '../../util/text-table.ts';

const keys = [
  ...warehouseSettingKeys,
  'rawDir',
  'siteTimeZone',
  'promote',
  'logLevel',
] as const satisfies readonly SettingKey[];

export function registerReplay(program: Command): void {
  const command = program
    .command('replay')
    .summary('normalise and load the raw pages a run landed (data/raw/<run-id>/) without calling the site')
    .description(
      'Normalise and load the raw pages a run landed (<raw dir>/<run-id>/) without calling the site, merged by ' +
        'primary key as a sync loads them. Records no run or stream state, and builds no model or snapshot: run ' +
        '`grantflow models run` and `grantflow snapshot` after it.',
    )
    .requiredOption('--run <id>', 'run id (see `grantflow status`, or the folder names under the raw dir)');
  addSettings(command, keys);
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const settings = await settingsFrom(options, keys);
      const logger = createLogger({ level: settings.logLevel });
      const promotions = promotionsOf(settings);
      // A wrong run id is found before the warehouse is opened (and, for a new DuckDB file, created).
      await rawRunDir(settings.rawDir, String(options.run));
      const warehouse = await openConfiguredWarehouse(settings, logger);
      try {
        await warehouse.acquireLock(`grantflow replay (pid ${process.pid})`);
        const started = Date.now();
        const infos = await runReplay({
          warehouse,
          rawDir: settings.rawDir,
          runId: String(options.run),
          siteTimeZone: settings.siteTimeZone,
          promotions,
        });
        const records = infos.reduce((a, i) => a + i.records, 0);
        const secs = (Date.now() - started) / 1000;
        const rows = infos.map((i) => [
          i.stream,
          `${i.records} records`,
          `${i.pages} pages`,
          `${i.quarantined} quarantined${i.untyped ? `, ${i.untyped} values untyped (NULL, kept in _raw)` : ''}${i.silent ? `, ${i.silent} records without a list (its rows kept)` : ''}${i.naiveTimestamps ? `, ${i.naiveTimestamps} times without a zone (read in ${settings.siteTimeZone})` : ''}`,
        ]);
        if (rows.length > 0)
          process.stdout.write(
            renderTable(unitColumns(['stream', 'records', 'pages', 'quarantined'], 'quarantined'), rows, {
              header: false,
              indent: 2,
            }).join('\n') + '\n',
          );
        process.stdout.write(
          `replayed ${records} records in ${secs.toFixed(1)} s (${Math.round(records / Math.max(secs, 0.001))} records/s)\n`,
        );
      } finally {
        await warehouse.close();
      }
    }),
  );
}
