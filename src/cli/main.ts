import { Command, CommanderError } from 'commander';
import { ExitCode } from '../util/errors.ts';
import { commands } from './commands/index.ts';

const program = new Command('grantflow')
  .description(
    'ETL for a grant and application management REST API: extract every list endpoint at the site rate limit,\n' +
      'normalise into DuckDB (default) or PostgreSQL, run SQL models and write Parquet snapshots.',
  )
  .version('0.1.0')
  .showHelpAfterError()
  .exitOverride();

for (const register of commands) register(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version exit 0; bad usage is exit 2 (commander already printed the message).
    process.exitCode = error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  } else {
    throw error;
  }
}
