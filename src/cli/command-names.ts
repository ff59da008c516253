import type { Command } from 'commander';
import { ConfigError } from '../util/errors.ts';
import { runAction } from './run-action.ts';

/**
 * The problem with the command `args` name at the top level, as one line, or null. Checked before commander parses:
 * it prints the top-level help, exit 0, for `grantflow frobnicate --help`, which a script would take for success.
 */
export function unknownCommand(program: Command, args: readonly string[]): string | null {
  // The top level has no option taking a value, so its first word not starting with `-` is the command.
  const name = args.find((a) => !a.startsWith('-'));
  if (name === undefined || name === 'help' || program.commands.some((c) => c.name() === name)) return null;
  return `grantflow: unknown command '${name}' (grantflow --help lists the commands)`;
}

/**
 * Makes a command that only groups others (`models run|test`) refuse to run without one in one line naming them,
 * rather than commander's `unknown option` for the first flag given (`grantflow models --warehouse x`).
 */
export function requireSubcommand(group: Command): void {
  const names = group.commands.map((c) => c.name());
  const list = names.join('|');
  group
    .allowUnknownOption()
    .allowExcessArguments()
    .action(
      runAction(async (_options: unknown, command: Command) => {
        const first = command.args[0];
        const which = first !== undefined && !first.startsWith('-') ? `unknown command '${first}'; ` : '';
        throw new ConfigError(
          `${which}\`${group.name()}\` needs a command: grantflow ${group.name()} ${list} (see --help)`,
        );
      }),
    );
}
