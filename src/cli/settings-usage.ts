import type { Command } from 'commander';
import type { SettingKey } from '../config/settings.ts';
import { settingOf } from './settings-options.ts';

/** Every command and subcommand of the program, each with its name as typed (`models run`), in `--help` order. */
export function commandPaths(program: Command): { path: string; command: Command }[] {
  const found: { path: string; command: Command }[] = [];
  const visit = (command: Command, path: string): void => {
    found.push({ path, command });
    for (const sub of command.commands) visit(sub, `${path} ${sub.name()}`);
  };
  for (const command of program.commands) visit(command, command.name());
  return found;
}

/** For each setting, the commands that read it (`sync`, `models run`, ...), in the order `--help` lists them. */
export function commandsBySetting(program: Command): Map<SettingKey, string[]> {
  const found = new Map<SettingKey, string[]>();
  for (const { path, command } of commandPaths(program))
    for (const option of command.options) {
      const key = settingOf(option);
      if (key) found.set(key, [...(found.get(key) ?? []), path]);
    }
  return found;
}
