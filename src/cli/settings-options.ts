import { Option, type Command } from 'commander';
import { envName, flagName, flagOnlySettings, warehouseFile, type SettingKey } from '../config/settings.ts';
import { flagSyntax, settingHelp } from '../config/setting-help.ts';
import { loadSettings, parseSettingText, settingSource } from '../config/load-settings.ts';
import { ConfigError } from '../util/errors.ts';
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
 * validated (ConfigError if bad). A `schema` given with a DuckDB warehouse is refused unless `readsSchema` (a
 * command that reads a portfolio site's schema of the file): elsewhere it would be ignored in silence.
 */
export async function settingsFrom<K extends SettingKey>(
  options: Record<string, unknown>,
  keys: readonly K[],
  flags: Partial<Record<SettingKey, unknown>> = flagsFrom(options, keys),
  portfolio = false,
  readsSchema = false,
): Promise<Pick<Settings, K>> {
  const settings = await loadSettings(flags, { pipeline: options.pipeline as string | undefined, keys, portfolio });
  if (!readsSchema) refuseDuckDBSchema(settings);
  return settings;
}

/** Where a setting was given, as the user typed it: `--schema`, `GRANTFLOW_SCHEMA` or `"schema" in the pipeline file`. */
export function givenAs(settings: Partial<Settings>, key: SettingKey): string | undefined {
  const source = settingSource(settings, key);
  if (source === 'flag') return `--${flagName(key)}`;
  if (source === 'environment') return envName(key);
  return source === 'pipeline file' ? `"${key}" in the pipeline file` : undefined;
}

function refuseDuckDBSchema(settings: Partial<Settings>): void {
  const given = givenAs(settings, 'schema');
  if (given === undefined || settings.warehouse === undefined || warehouseFile(settings.warehouse) === null) return;
  throw new ConfigError(
    `${given} names a Postgres schema, and ${settings.warehouse} is a DuckDB file, whose tables this command keeps ` +
      `in main (a portfolio's in site_<name>, from its pipeline file): drop it; status, report and query read a ` +
      `portfolio site's schema of a DuckDB file with --schema site_<name>`,
  );
}
