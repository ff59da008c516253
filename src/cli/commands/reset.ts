import type { Command } from 'commander';

import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';

import { resetStreams } from '../../pipeline/reset-streams.ts';

import { openConfiguredWarehouse } from '../../warehouse/index.ts';

import { ConfigError } from '../../util/errors.ts';

import { createLogger } from '../../util/logger.ts';

import { runAction } from '../run-action.ts';

import { addSettings, settingsFrom } from '../settings-options.ts';
import { selectStreams, streamCatalog, tables } from '../../streams/registry.ts';
import { renderTable } from '../../util/text-table.ts';

const keys = [...warehouseSettingKeys, 'streams', 'logLevel'] as const satisfies readonly SettingKey[];

export function registerReset(program: Command): void {
  const command = program
    .command('reset')
    .summary("forget streams' incremental state so the next sync reads them whole")
    .description(
      'Forget what the warehouse knows of the named streams: the state of each (the newest id of an append-only log, ' +
        "the last full refresh of a fan-out stream) and a fan-out stream's parent marks, so the next sync reads " +
        "every parent's children again. Rows are kept. --streams is required: name the fan-out streams themselves " +
        '(application_tasks, not applications, whose list is read whole every run anyway).',
    );
  addSettings(command, keys);
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const settings = await settingsFrom(options, keys);
      if (!settings.streams)
        throw new ConfigError(
          `--streams is required: name the streams to reset (known: ${streamCatalog.map((s) => s.name).join(', ')})`,
        );
      // Only the streams named: selectStreams would add a fan-out stream's parent stream too.
      const named = new Set(settings.streams);
      const defs = selectStreams(settings.streams).filter((d) => named.has(d.name));
      const logger = createLogger({ level: settings.logLevel });
      const warehouse = await openConfiguredWarehouse(settings, logger, { existingOnly: true });
      try {
        await warehouse.acquireLock(`grantflow reset (pid ${process.pid})`);
        await warehouse.migrate(tables);
        const done = await resetStreams(warehouse, defs);
        const rows = done.map((r) => {
          const what = [r.hadState ? 'state forgotten' : 'no state was stored'];
          if (r.marksDropped > 0) what.push(`${r.marksDropped} parent marks dropped`);
          return [r.stream, what.join(', ')];
        });
        const lines = renderTable([{ header: 'stream' }, { header: 'what' }], rows, { header: false, indent: 2 });
        process.stdout.write(
          [`reset in ${warehouse.description}:`, ...lines, 'the next sync reads these streams whole'].join('\n') + '\n',
        );
      } finally {
        await warehouse.close();
      }
    }),
  );
}
