import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { answerShapes, isScaleName, scales, startSimulator, type SimulatorOptions } from '../../simulator/index.ts';
import { FileCredentialStore, type Credentials } from '../../credentials/index.ts';
import { ConfigError } from '../../util/errors.ts';
import { isDirectory, pathProblem } from '../../util/path-problem.ts';
import { checkWritableDir } from '../../util/writable-dir.ts';
import { runAction } from '../run-action.ts';

interface SimFlags {
  port: string;
  host: string;
  seed: string;
  scale: string;
  rate: string;
  faults: string;
  latency: string;
  tokenTtl: string;
  perPageMax: string;
  perPageOverMax: string;
  answers: string;
  credentialsOut?: string;
}

function overMax(raw: string): 'cap' | 'reject' {
  if (raw === 'cap' || raw === 'reject') return raw;
  throw new ConfigError(`--per-page-over-max must be cap or reject, got "${raw}"`);
}

export function integer(flag: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`${flag} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}

/** The simulator's seeds: the same range for `sim` and `demo`. */
export const seedFlag = (raw: string): number => integer('--seed', raw, 0, 2 ** 32 - 1);

function number(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max)
    throw new ConfigError(`${flag} must be a number from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function parseSimFlags(flags: SimFlags): SimulatorOptions {
  if (!isScaleName(flags.scale))
    throw new ConfigError(`--scale must be one of ${Object.keys(scales).join(', ')}, got "${flags.scale}"`);
  if (flags.host.trim() === '') throw new ConfigError('--host must not be empty');
  const faults = number('--faults', flags.faults, 0, 1);
  const latency = integer('--latency', flags.latency, 0, 600_000);
  const answerShape = answerShapes.find((s) => s === flags.answers);
  if (answerShape === undefined)
    throw new ConfigError(`--answers must be one of ${answerShapes.join(', ')}, got "${flags.answers}"`);
  return {
    port: integer('--port', flags.port, 0, 65_535),
    host: flags.host,
    seed: seedFlag(flags.seed),
    scale: flags.scale,
    rate: number('--rate', flags.rate, 0, 1_000_000),
    faults: { rate: faults },
    latency: { ms: latency },
    tokenTtlSeconds: integer('--token-ttl', flags.tokenTtl, 1),
    perPageMax: integer('--per-page-max', flags.perPageMax, 1),
    perPageOverMax: overMax(flags.perPageOverMax),
    answerShape,
  };
}

/** The credentials file, written as a sync rewrites its own (atomically, mode 0600); its folder is created. */
async function writeCredentials(file: string, credentials: Credentials): Promise<void> {
  try {
    await mkdir(dirname(file), { recursive: true });
    await new FileCredentialStore(file).save(credentials);
  } catch (e) {
    const why = pathProblem(e instanceof Error && e.cause !== undefined ? e.cause : e, dirname(file));
    throw credentialsOutError(file, why, e);
  }
}

function credentialsOutError(file: string, why: string, cause?: unknown): ConfigError {
  return new ConfigError(`cannot write the credentials file ${file} (${why}); choose another --credentials-out`, {
    cause,
  });
}

/**
 * The `--credentials-out` file, resolved: messages show the path as every other command's do. An empty value is
 * refused: read as "not given", it would leave the operator waiting for a file that is never written.
 */
function credentialsOutPath(given: string | undefined): string | undefined {
  if (given === undefined) return undefined;
  if (given.trim() === '')
    throw new ConfigError(
      `--credentials-out must name a file, got "${given}"; leave it out to write no credentials file`,
    );
  return resolve(given);
}

/** Before the site is generated (minutes at the large scale) and listening: a path that cannot take the file. */
function checkCredentialsOut(file: string): void {
  checkWritableDir(dirname(file), 'credentials directory', 'choose another --credentials-out');
  if (isDirectory(file)) throw credentialsOutError(file, 'it is a directory, not a file');
}

export function registerSim(program: Command): void {
  program
    .command('sim')
    .description('run the simulated grant site (for tests, demos and benchmarks) until SIGINT/SIGTERM')
    .option('--port <n>', 'port to listen on (0 = any free port)', '0')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--seed <n>', 'seed of the generated data', '1')
    .option('--scale <scale>', `data size: ${Object.keys(scales).join('|')}`, 'tiny')
    .option('--rate <n>', 'requests per second per client (0 = unlimited)', '5')
    .option('--faults <rate>', 'share of /api/ requests that get a fault (0..1)', '0')
    .option('--latency <ms>', 'added latency of every /api/ request', '0')
    .option('--token-ttl <seconds>', 'access token lifetime', '7200')
    .option('--per-page-max <n>', 'largest per_page served (larger values are clamped)', '100')
    .option('--per-page-over-max <cap|reject>', 'a larger per_page gets pages of --per-page-max (cap) or a 400', 'cap')
    .option(
      '--answers <shape>',
      'task answers as the service sends them, {label, response} (wrapped), or as spec 2.5 lists them (bare)',
      'wrapped',
    )
    .option(
      '--credentials-out <file>',
      'write {client_id, client_secret, access_token, refresh_token} here (mode 0600; must not be empty)',
    )
    .action(
      runAction(async (flags: SimFlags) => {
        const options = parseSimFlags(flags);
        const credentialsOut = credentialsOutPath(flags.credentialsOut);
        if (credentialsOut !== undefined) checkCredentialsOut(credentialsOut);
        const sim = await startSimulator(options).catch((error: unknown) => {
          throw new ConfigError(
            `cannot listen on ${options.host}:${options.port}: ${error instanceof Error ? error.message : String(error)}`,
          );
        });
        if (credentialsOut !== undefined) {
          // A failed write stops the server too: left listening, the process would never exit.
          await writeCredentials(credentialsOut, sim.credentials).catch(async (e: unknown) => {
            await sim.close();
            throw e;
          });
        }
        process.stdout.write(`grantflow sim: ${options.scale} site (seed ${options.seed}) listening on ${sim.url}\n`);
        await new Promise<void>((resolve) => {
          const stop = (): void => resolve();
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
        await sim.close();
        return 0;
      }),
    );
}
