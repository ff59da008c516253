import { pino, type Logger } from 'pino';
import { redact, secretKeys } from './redact.ts';
import { prettyDestination } from './pretty-log.ts';
import { stderrScreen } from './terminal-screen.ts';

export type { Logger };

/**
 * Logs on stderr (stdout stays for summaries): JSON, or human-readable lines when stderr is a terminal (pretty-log.ts;
 * `pretty` overrides). Known secret keys are censored by pino's redaction and every
 * line, fields included, passes through `redact`, which knows the tokens seen at run time: a field such as a URL the
 * site sent (a next link) may carry one under any name.
 */
export function createLogger(options: { level?: string; name?: string; pretty?: boolean } = {}): Logger {
  const pretty = options.pretty ?? Boolean(process.stderr.isTTY);
  return pino(
    {
      name: options.name ?? 'grantflow',
      level: options.level ?? process.env.GRANTFLOW_LOG_LEVEL ?? 'info',
      redact: { paths: [...secretKeys, ...secretKeys.map((k) => `*.${k}`)], censor: '[REDACTED]' },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? redact(a) : a)) as Parameters<typeof method>);
        },
        streamWrite: (line) => redact(line),
      },
      formatters: { level: (label) => ({ level: label }) },
    },
    pretty ? prettyDestination(stderrScreen) : pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that discards everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
