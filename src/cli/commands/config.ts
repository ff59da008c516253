import type { Command } from 'commander';
import { settingKinds, type SettingKey } from '../../config/settings.ts';
import { describeSettings, formatSettings } from '../../config/describe-settings.ts';
import { runAction } from '../run-action.ts';
import { addSettings, settingsFrom } from '../settings-options.ts';

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
      const settings = await settingsFrom(options, keys);
      const pipeline = (options.pipeline as string | undefined) ?? process.env.GRANTFLOW_PIPELINE;
      process.stdout.write(formatSettings(describeSettings(settings, process.env, pipeline)));
    }),
  );
}
