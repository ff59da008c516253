import type { Command } from 'commander';
import { loadSettings } from '../../config/load-settings.ts';
import type { SettingKey } from '../../config/settings.ts';
import { runSync } from '../../pipeline/sync.ts';
import { formatSummary } from '../../pipeline/summary.ts';
import { createLogger } from '../../util/logger.ts';
import { runAction } from '../run-action.ts';
import { addSettingOptions, flagsFrom } from '../settings-options.ts';

export const syncKeys: readonly SettingKey[] = [
  'site',
  'credentials',
  'warehouse',
  'schema',
  'snapshots',
  'rawDir',
  'landRaw',
  'streams',
  'fullRefresh',
  'fullRefreshAfterDays',
  'rate',
  'perPage',
  'concurrency',
  'siteTimeZone',
  'retainSnapshots',
  'models',
  'snapshot',
  'logLevel',
];

export function registerSync(program: Command): void {
  const command = program
    .command('sync')
    .description(
      'extract every stream of a site into the warehouse, run models and data tests, write Parquet snapshots.\n' +
        'Incremental by default: per-application calls only for new or changed applications. A killed run is\n' +
        'resumed by the next one. Exit codes: 0 success, 1 run failed (see summary), 2 bad usage or configuration.',
    )
    .option(
      '--pipeline <file>',
      'pipeline JSON file with any of these settings (camelCase keys) [env GRANTFLOW_PIPELINE]',
    );
  addSettingOptions(command, syncKeys);
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const settings = await loadSettings(flagsFrom(options, syncKeys), {
        pipeline: options.pipeline as string | undefined,
      });
      const logger = createLogger({ level: settings.logLevel });
      const result = await runSync({ settings, logger });
      process.stdout.write(formatSummary({ ...result, client: result.client, extra: result.after?.lines ?? [] }));
      return result.exitCode;
    }),
  );
}
