import { CommanderError } from 'commander';
import { ExitCode } from '../util/errors.ts';
import { buildProgram } from './program.ts';
import { unknownCommand } from './command-names.ts';

/**
 * Runs the words after `grantflow` and returns the exit code: an unknown command is one line and exit 2, --help and
 * --version exit 0, bad usage exit 2 (commander prints its message), a command's own code otherwise. `main.ts` runs
 * it for the process; the tests run it in their own process, so both read a command line the same way.
 */
export async function runCommandLine(args: readonly string[]): Promise<number> {
  const program = buildProgram();
  const problem = unknownCommand(program, args);
  if (problem !== null) {
    process.stderr.write(`${problem}\n`);
    return ExitCode.usage;
  }
  try {
    await program.parseAsync(args, { from: 'user' });
    return Number(process.exitCode ?? ExitCode.ok);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
}
