import type { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';
import { durationOrZeroMs } from '../../config/duration.ts';
import { purgeAfterLoad } from '../../pipeline/purge-step.ts';
import { countPurge, purgeCutoff, purgeLine } from '../../privacy/purge.ts';
import { keyForMode } from '../../privacy/pseudonym-key.ts';
import { refreshPseudonyms } from '../../privacy/pseudonyms.ts';
import { createDeidentifiedViews } from '../../privacy/deidentified-views.ts';
import { PersonalColumns } from '../../privacy/personal-columns.ts';
import { defaultSnapshotTables, writeSnapshots } from '../../snapshot/index.ts';
import { defaultCatalog, tables } from '../../streams/registry.ts';
import { openConfiguredWarehouse } from '../../warehouse/index.ts';
import { ConfigError, ExitCode } from '../../util/errors.ts';
import { createLogger } from '../../util/logger.ts';
import { renderTable } from '../../util/text-table.ts';
import { runAction } from '../run-action.ts';
import { addSettings, settingsFrom } from '../settings-options.ts';

const keys = [
  ...warehouseSettingKeys,
  'purgeDeletedAfter',
  'rawDir',
  'snapshot',
  'snapshots',
  's3ForcePathStyle',
  'personalData',
  'modelsDir',
  'logLevel',
] as const satisfies readonly SettingKey[];

export function registerPurge(program: Command): void {
  const command = program
    .command('purge')
    .summary('remove rows soft-deleted longer ago than --purge-deleted-after, with their raw pages and snapshots')
    .description(
      'Remove every row soft-deleted longer ago than --purge-deleted-after (0s: every soft-deleted row) from the ' +
        'tables and their history, the users only those rows named, their records from the raw pages of every run, ' +
        'and, with snapshots on, every older snapshot (one is written without them). A sync with the setting does ' +
        'the same after its load. --dry-run counts what would go, per table, and changes nothing. See docs/privacy.md.',
    )
    .option('--dry-run', 'count what would go, per table (never values), and change nothing');
  addSettings(command, keys);
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const settings = await settingsFrom(options, keys);
      if (settings.purgeDeletedAfter === undefined)
        throw new ConfigError(
          'no purge window: pass --purge-deleted-after (e.g. 90d, or 0s for every soft-deleted row), GRANTFLOW_PURGE_DELETED_AFTER or "purgeDeletedAfter" in the pipeline file',
        );
      const dryRun = options.dryRun === true;
      const key = dryRun ? null : keyForMode(settings.snapshot ? settings.personalData : 'keep');
      const logger = createLogger({ level: settings.logLevel });
      const warehouse = await openConfiguredWarehouse(settings, logger, { existingOnly: true, readOnly: dryRun });
      try {
        await warehouse.acquireLock(`grantflow purge (pid ${process.pid})`);
        if (dryRun) {
          const cutoff = purgeCutoff(durationOrZeroMs(settings.purgeDeletedAfter) ?? 0, new Date());
          const counts = await countPurge(warehouse, defaultCatalog, cutoff);
          const rows = [
            ...counts.tables.map((t) => [t.table, String(t.rows)]),
            ...counts.history.map((t) => [t.table, String(t.rows)]),
            ...(counts.persons > 0 ? [['users (named only by those rows)', String(counts.persons)]] : []),
          ];
          const table = renderTable([{ header: 'table' }, { header: 'rows', align: 'right' }], rows, { indent: 2 });
          process.stdout.write(
            [purgeLine(counts, false), ...(rows.length > 0 ? table : []), 'dry run: nothing was changed'].join('\n') +
              '\n',
          );
          return ExitCode.ok;
        }
        await warehouse.migrate(tables);
        const outcome = await purgeAfterLoad(warehouse, settings, defaultCatalog, logger);
        const lines = [outcome?.line ?? ''];
        if (outcome?.removed && settings.snapshot) {
          const personal = PersonalColumns.of(undefined, settings.modelsDir);
          if (key !== null) {
            await refreshPseudonyms(warehouse, key, personal);
            await createDeidentifiedViews(warehouse, personal);
          }
          // Every kept snapshot holds the purged rows: one without them is written, and kept alone.
          const snap = await writeSnapshots(warehouse, {
            dir: settings.snapshots,
            runId: `purge-${randomUUID()}`,
            retain: 1,
            tables: await defaultSnapshotTables(warehouse),
            logger,
            command: 'grantflow purge',
            s3ForcePathStyle: settings.s3ForcePathStyle,
            personalData: { mode: settings.personalData, columns: personal },
          });
          lines.push(
            `snapshots: ${snap.tables.length} tables written to ${snap.dir} without them; ${snap.removed.length} older paths removed`,
          );
        }
        process.stdout.write(`${lines.join('\n')}\n`);
        return ExitCode.ok;
      } finally {
        await warehouse.close();
      }
    }),
  );
}
