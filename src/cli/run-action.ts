import { ConfigError, ExitCode, firstLine, isGrantflowError } from '../util/errors.ts';
import { redact } from '../util/redact.ts';
import { privilegesDoc } from '../util/doc-pointers.ts';

/**
 * Postgres refused a statement for a missing privilege (SQLSTATE 42501, e.g. `status` run as a role that may not
 * read the bookkeeping tables): the setup is at fault, not grantflow, so it is a one-line configuration error.
 */
function privilegeError(error: unknown): ConfigError | null {
  if ((error as { code?: unknown } | null)?.code !== '42501') return null;
  return new ConfigError(
    `the Postgres role lacks a privilege grantflow needs: ${firstLine(error)} (${privilegesDoc} lists them)`,
    { cause: error },
  );
}

/**
 * Wraps a command's action: expected errors print one clear line (no stack) and exit with their code;
 * anything else is a bug and prints its stack (redacted) with exit code 1.
 */
export function runAction<A extends unknown[]>(action: (...args: A) => Promise<number | void>) {
  return async (...args: A): Promise<void> => {
    try {
      const code = await action(...args);
      process.exitCode = code ?? ExitCode.ok;
    } catch (thrown) {
      const error = privilegeError(thrown) ?? thrown;
      if (isGrantflowError(error)) {
        process.stderr.write(`grantflow: ${redact(error.message)}\n`);
        process.exitCode = error.exitCode;
      } else {
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
        process.stderr.write(`grantflow: unexpected error (a bug; please report it):\n${redact(text)}\n`);
        process.exitCode = ExitCode.runFailed;
      }
    }
  };
}
