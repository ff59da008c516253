import type { Command } from 'commander';
import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';
import { openConfiguredWarehouse } from '../../warehouse/index.ts';
import { ConfigError, ExitCode } from '../../util/errors.ts';
import { createLogger } from '../../util/logger.ts';
import { checkWritableDir } from '../../util/writable-dir.ts';
import { runAction } from '../run-action.ts';
import { keyForMode } from '../../privacy/pseudonym-key.ts';
import { PersonalColumns } from '../../privacy/personal-columns.ts';
import { addSettings, flagsFrom } from '../settings-options.ts';
import { addSiteOption, readTarget } from '../read-target.ts';

const keys = [...warehouseSettingKeys, 'personalData', 'logLevel'] as const satisfies readonly SettingKey[];

export function registerReport(program: Command): void {
  const command = program
    .command('report')
    .summary('write the HTML report (charts and tables, no server needed) from a warehouse (read only)')
    .description(
      'Write a static site (index.html and a page each for funding, awards, reviews, the pipeline, data health and ' +
        'the data dictionary) from the warehouse a sync wrote. It needs no server and fetches nothing: open ' +
        "<out>/index.html from a file share or a CI artefact. A portfolio's site: --pipeline FILE --site NAME or " +
        '--schema site_<name>. See docs/report.md.',
    )
    .option('--out <dir>', 'directory to write the report into [env GRANTFLOW_REPORT, pipeline key "report"]');
  addSiteOption(addSettings(command, keys));
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      // --out, else the `report` setting a sync writes after each run (variable or pipeline file).
      const settings = await readTarget(options, [...keys, 'report'], 'refuse', flagsFrom(options, keys));
      const out = typeof options.out === 'string' ? options.out : settings.report;
      if (!out)
        throw new ConfigError(
          'no report directory: pass --out DIR (or GRANTFLOW_REPORT, or "report" in the pipeline file)',
        );
      checkWritableDir(out, 'report directory', 'choose another one with --out or fix its permissions');
      const key = keyForMode(settings.personalData);
      const logger = createLogger({ level: settings.logLevel });
      // Read only: a DuckDB file is shared with analysts' read-only connections.
      const warehouse = await openConfiguredWarehouse(settings, logger, { existingOnly: true, readOnly: true });
      try {
        // Read while no sync writes, so every page shows the same load (as `snapshot` does).
        await warehouse.acquireLock(`grantflow report (pid ${process.pid})`);
        // Loaded when the command runs: every other command starts without the charting libraries.
        const { writeReport } = await import('../../report/write-report.ts');
        const report = await writeReport(warehouse, out, {
          holdsRunLock: true,
          personalData: { mode: settings.personalData, key, columns: PersonalColumns.of() },
        });
        process.stdout.write(
          `report written to ${report.index} (${report.files.length} pages) in ${(report.durationMs / 1000).toFixed(1)} s\n`,
        );
        return ExitCode.ok;
      } finally {
        await warehouse.close();
      }
    }),
  );
}
