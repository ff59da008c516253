import { Command } from 'commander';
import { requireSubcommand } from './command-names.ts';
import { commands } from './commands/index.ts';

/**
 * The `grantflow` program with every command registered, not yet parsed: `main.ts` runs it, and the settings
 * reference (`grantflow docs settings`) and the help tests read its commands and options.
 */
export function buildProgram(): Command {
  const program = new Command('grantflow')
    .description(
      'ETL for a grant and application management REST API: extract every list endpoint at the site rate limit, ' +
        'normalise into DuckDB (default) or PostgreSQL, run SQL models and write Parquet snapshots.',
    )
    .addHelpText(
      'after',
      `
Start here:
  grantflow demo                       the whole pipeline against the built-in simulated site
  grantflow doctor --site URL --credentials FILE
  grantflow sync   --site URL --credentials FILE [--warehouse FILE|postgres://...]

Exit codes:
  0  success, or paused by --max-duration
  1  the run failed, was partial, or was interrupted (SIGINT/SIGTERM); the next sync resumes it
  2  bad usage or configuration: nothing is written (credentials the site rejects mid-sync keep what was
     committed)

Run \`grantflow <command> --help\` for a command's options; docs/settings.md lists every setting.`,
    )
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  for (const register of commands) register(program);
  for (const command of program.commands) if (command.commands.length > 0) requireSubcommand(command);
  return program;
}
