import { Command, CommanderError } from 'commander';
import { ExitCode } from '../util/errors.ts';
import { commands } from './commands/index.ts';
import { applyHeapPolicy } from '../util/heap-policy.ts';

applyHeapPolicy();

// `grantflow status | head` closes the pipe early: that is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

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

Exit codes: 0 success (or paused by --max-duration), 1 run failed, partial or interrupted (SIGINT/SIGTERM; the next sync resumes it),
2 bad usage or configuration (nothing written; credentials rejected mid-sync keep what was committed).
Run \`grantflow <command> --help\` for a command's options.`,
  )
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
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
