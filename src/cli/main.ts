import { runCommandLine } from './run-command-line.ts';
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

process.exitCode = await runCommandLine(process.argv.slice(2));
