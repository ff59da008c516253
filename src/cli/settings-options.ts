import { Option, type Command } from 'commander';
import { envName, flagName, flagOnlySettings, type SettingKey } from '../config/settings.ts';
import { flagSyntax, settingHelp } from '../config/setting-help.ts';
import { loadSettings, parseSettingText } from '../config/load-settings.ts';
import type { Settings } from '../config/settings.ts';

/** The setting behind each option `addSettingOptions` made (`sim --rate`, a plain option, is not `sync --rate`). */
const settingOfOption = new WeakMap<Option, SettingKey>();

export const settingOf = (option: Option): SettingKey | undefined => settingOfOption.get(option);

/** Adds `--<setting>` options for the given settings; each notes its GRANTFLOW_* variable. */
export function addSettingOptions(command: Command, keys: readonly SettingKey[]): Command {
  for (const key of keys) {
    const variable = flagOnlySettings.has(key) ? 'flag only' : `env ${envName(key)}`;
    const option = new Option(flagSyntax(key), `${settingHelp[key]} [${variable}]`);
    settingOfOption.set(option, key);
    command.addOption(option);
  }
  return command;
}

/** Turns commander's parsed options back into typed settings (only those given). */
export function flagsFrom(
  options: Record<string, unknown>,
  keys: readonly SettingKey[],
): Partial<Record<SettingKey, unknown>> {
  const out: Partial<Record<SettingKey, unknown>> = {};
  for (const key of keys) {
    const value = options[key];
    if (value === undefined) continue;
    if (value === true) out[key] = true;
    else out[key] = parseSettingText(key, String(value), `--${flagName(key)}`);
  }
  return out;
}

/** `--pipeline` plus the given settings' options: what every command that reads settings offers. */
export function addSettings(command: Command, keys: readonly SettingKey[]): Command {
  command.option(
    '--pipeline <file>',
    'pipeline JSON file with any of these settings (camelCase keys) [env GRANTFLOW_PIPELINE]',
  );
  return addSettingOptions(command, keys);
}

/**
 * The command's settings (only `keys`: those it uses), merged with the environment and the pipeline file and
 * validated (ConfigError if bad).
 */
export function settingsFrom<K extends SettingKey>(
  options: Record<string, unknown>,
  keys: readonly K[],
  flags: Partial<Record<SettingKey, unknown>> = flagsFrom(options, keys),
  portfolio = false,
): Promise<Pick<Settings, K>> {
  return loadSettings(flags, { pipeline: options.pipeline as string | undefined, keys, portfolio });
}
