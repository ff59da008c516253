import type { Command } from 'commander';
import { settingKinds, type SettingKey } from '../../config/settings.ts';
import { describeSettings, type SettingLine } from '../../config/describe-settings.ts';
import { runAction } from '../run-action.ts';
import { addSettings, settingsFrom } from '../settings-options.ts';
import { outputWidth, renderTable } from '../../util/text-table.ts';

const keys = Object.keys(settingKinds) as SettingKey[];

export function registerConfig(program: Command): void {
  const command = program
    .command('config')
    .summary('print every effective setting and where it came from (secrets masked)')
    .description(
      'Print every setting as a command given the same flags, GRANTFLOW_* variables and pipeline file would use it: ' +
        'its value and where it came from (flag, variable, pipeline file or default). Passwords in URLs and the ' +
        'GRANTFLOW_* credential variables are masked. Validates like sync: a bad value is one line and exit 2.',
    );
  addSettings(command, keys);
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      // Reads `schema` as status would, so a schema given with a DuckDB file is shown (with who reads it), not refused.
      const settings = await settingsFrom(options, keys, undefined, false, true);
      const pipeline = (options.pipeline as string | undefined) ?? process.env.GRANTFLOW_PIPELINE;
      const lines = settingsTable(describeSettings(settings, process.env, pipeline), outputWidth());
      process.stdout.write(lines.join('\n') + '\n');
    }),
  );
}

/** The settings as a table (setting, value, from), values and origins folded to `width` rather than cut. */
export function settingsTable(lines: readonly SettingLine[], width: number | undefined): string[] {
  return renderTable(
    [
      { header: 'setting', minWidth: 12 },
      { header: 'value', overflow: 'fold', minWidth: 20 },
      { header: 'from', overflow: 'fold', minWidth: 16 },
    ],
    lines.map((l) => [l.key, l.value, l.from]),
    { width },
  );
}
