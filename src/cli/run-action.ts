import { ExitCode, isGrantflowError } from '../util/errors.ts';
import { redact } from '../util/redact.ts';

/**
 * Wraps a command's action: expected errors print one clear line (no stack) and exit with their code;
 * anything else is a bug and prints its stack (redacted) with exit code 1.
 */
export function runAction<A extends unknown[]>(action: (...args: A) => Promise<number | void>) {
  return async (...args: A): Promise<void> => {
    try {
      const code = await action(...args);
      process.exitCode = code ?? ExitCode.ok;
    } catch (error) {
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
