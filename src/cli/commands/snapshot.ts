import type { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';
import { openConfiguredWarehouse } from '../../warehouse/index.ts';
import {
  checkSnapshotTarget,
  checkTablesReadable,
  defaultSnapshotTables,
  writeSnapshots,
} from '../../snapshot/index.ts';
import { ConfigError, ExitCode } from '../../util/errors.ts';
import { createLogger } from '../../util/logger.ts';
import { runAction } from '../run-action.ts';
import { keyForMode } from '../../privacy/pseudonym-key.ts';
import { checkTokenKey } from '../../privacy/pseudonyms.ts';
import { PersonalColumns } from '../../privacy/personal-columns.ts';
import { addSettingOptions, flagsFrom, settingsFrom } from '../settings-options.ts';
import { commaList } from '../../util/comma-list.ts';
import { renderTable, unitColumns } from '../../util/text-table.ts';

const keys = [
  ...warehouseSettingKeys,
  'snapshots',
  's3ForcePathStyle',
  'retainSnapshots',
  'snapshotRaw',
  'personalData',
  'modelsDir',
  'logLevel',
] as const satisfies readonly SettingKey[];

export function registerSnapshot(program: Command): void {
  const command = program
    .command('snapshot')
    .description(
      'write Parquet snapshots (zstd) of every core table and built model, plus _manifest.json (reads the warehouse only)',
    )
    .option('--retain <n>', 'snapshots kept per table (same as --retain-snapshots)')
    .option('--tables <a,b>', 'only these tables')
    .option('--pipeline <file>', 'pipeline JSON file [env GRANTFLOW_PIPELINE]');
  addSettingOptions(command, keys);
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const flags = flagsFrom(options, keys);
      if (options.retain !== undefined) {
        const retain = Number(options.retain);
        if (!Number.isInteger(retain) || retain < 1)
          throw new ConfigError(`--retain must be a whole number of at least 1 (got ${String(options.retain)})`);
        flags.retainSnapshots = retain;
      }
      const tables = typeof options.tables === 'string' ? tableList(options.tables) : undefined;
      const settings = await settingsFrom(options, keys, flags);
      const pseudonymKey = keyForMode(settings.personalData);
      await checkSnapshotTarget(settings.snapshots, settings);
      const logger = createLogger({ level: settings.logLevel });
      // Read only: a DuckDB file is shared with analysts' read-only connections, and no sync can open it meanwhile.
      const warehouse = await openConfiguredWarehouse(settings, logger, { existingOnly: true, readOnly: true });
      try {
        // Read while no sync writes: on Postgres a table read in pages while a sync upserts it can repeat rows.
        await warehouse.acquireLock(`grantflow snapshot (pid ${process.pid})`);
        const available = await defaultSnapshotTables(warehouse);
        const wanted = tables ?? available;
        const missing = wanted.filter((t) => !available.includes(t));
        if (missing.length > 0)
          throw new ConfigError(`no such table to snapshot in ${warehouse.description}: ${missing.join(', ')}`);
        if (wanted.length === 0)
          throw new ConfigError(`warehouse ${warehouse.description} has no tables yet; run a sync first`);
        await checkTablesReadable(warehouse, wanted);
        // Read only: the tokens are those the last sync made, which must be of this key.
        if (pseudonymKey !== null && settings.personalData === 'pseudonymize')
          await checkTokenKey(warehouse, pseudonymKey);
        const result = await writeSnapshots(warehouse, {
          dir: settings.snapshots,
          runId: `snapshot-${randomUUID()}`,
          retain: settings.retainSnapshots,
          tables: wanted,
          logger,
          command: 'grantflow snapshot',
          s3ForcePathStyle: settings.s3ForcePathStyle,
          raw: settings.snapshotRaw,
          personalData: { mode: settings.personalData, columns: PersonalColumns.of(undefined, settings.modelsDir) },
        });
        const written = result.tables.map((t) => [t.table, `${t.rows} rows`, `${t.bytes} bytes`, t.path]);
        if (written.length > 0)
          process.stdout.write(
            renderTable(unitColumns(['table', 'rows', 'bytes', 'path'], 'path'), written, { header: false }).join(
              '\n',
            ) + '\n',
          );
        process.stdout.write(
          `${result.tables.length} tables written to ${result.dir} (snapshot ${result.snapshot}) in ${result.durationMs} ms; ` +
            `${result.removed.length} old paths removed\n`,
        );
        return ExitCode.ok;
      } finally {
        await warehouse.close();
      }
    }),
  );
}

/** `--tables a,b`; an empty list is refused rather than read as "every table", as for `sync --streams`. */
function tableList(text: string): string[] {
  const names = commaList(text);
  if (names.length === 0)
    throw new ConfigError(`--tables must name at least one table, got "${text}"; leave it out to snapshot every table`);
  return names;
}
