import { CommanderError } from 'commander';
import { ExitCode } from '../util/errors.ts';
import { buildProgram } from './program.ts';
import { unknownCommand } from './command-names.ts';
import { applyHeapPolicy } from '../util/heap-policy.ts';

applyHeapPolicy();

// Owner-only files whatever umask the caller had: the warehouse (DuckDB creates it, its .wal and its spill folder
// itself), raw pages, snapshots and the report can hold client secrets and personal data.
process.umask(0o077);

// `grantflow status | head` closes the pipe early: that is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const program = buildProgram();
const problem = unknownCommand(program, process.argv.slice(2));

if (problem !== null) {
  process.stderr.write(`${problem}\n`);
  process.exitCode = ExitCode.usage;
} else {
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
}
