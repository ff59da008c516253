/**
 * `grantflow <args>` run inside the test's own process: what `src/cli/main.ts` runs (`runCommandLine`: the unknown
 * command check, the program, the exit code mapping), under the umask main.ts sets, and what the run wrote to stdout
 * and stderr, for tests whose subject is what a command does and says rather than the process. A spawned CLI costs
 * about a second of CPU before it does anything; tests about exit codes as the OS sees them, signals, the live view,
 * the bin entry and the environment a process starts with keep `runCli`. Not applied here: main.ts's heap policy (a
 * V8 flag of the whole process) and its EPIPE handling (a closed pipe).
 */
import fs from 'node:fs';
import { format } from 'node:util';
import { runCommandLine } from '../../src/cli/run-command-line.ts';
import type { CliResult } from './harness.ts';

let running = false;

/** Test hooks the sources read when their module is first imported, so an in-process run would not see them. */
const readAtImport = /^GRANTFLOW_TEST_(PAUSE|DELAY)_/;

/**
 * Runs `args` as `runCli` would: `env` on top of this process's variables (`GRANTFLOW_LOG_LEVEL=warn` unless given),
 * `cwd` as the working directory; both are put back afterwards. One run at a time: two would mix their output.
 */
export async function runCliInProcess(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<CliResult> {
  if (running) throw new Error('runCliInProcess: one run at a time (their output would mix); spawn the second');
  const atImport = Object.keys(options.env ?? {}).filter((k) => readAtImport.test(k));
  if (atImport.length) throw new Error(`runCliInProcess: ${atImport.join(', ')} is read once at import; spawn the CLI`);
  running = true;
  const env: NodeJS.ProcessEnv = { GRANTFLOW_LOG_LEVEL: 'warn', ...options.env };
  const savedEnv = Object.keys(env).map((k) => [k, process.env[k]] as const);
  const savedCwd = process.cwd();
  const savedExitCode = process.exitCode;
  const output = { stdout: '', stderr: '' };
  const restoreOutput = captureOutput(output);
  const restoreExit = refuseExit();
  // As main.ts: owner-only files whatever the test's umask.
  const savedUmask = process.umask(0o077);
  try {
    for (const [k, v] of Object.entries(env)) setVariable(k, v);
    if (options.cwd) process.chdir(options.cwd);
    process.exitCode = undefined;
    const code = await runCommandLine(args);
    return { code, signal: null, ...output };
  } finally {
    process.umask(savedUmask);
    restoreExit();
    restoreOutput();
    process.exitCode = savedExitCode;
    process.chdir(savedCwd);
    for (const [k, v] of savedEnv) setVariable(k, v);
    running = false;
  }
}

/**
 * Makes `process.exit` throw until the returned function is called: a command that ends the process would end the
 * test's worker, so such a command is spawned (`runCli`) instead.
 */
function refuseExit(): () => void {
  const exit = process.exit;
  process.exit = ((code?: number | string | null) => {
    throw new Error(`runCliInProcess: the command called process.exit(${String(code)}); spawn it (runCli)`);
  }) as typeof process.exit;
  return () => {
    process.exit = exit;
  };
}

function setVariable(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/**
 * Sends what is written to stdout and stderr into `output` until the returned function is called: through the
 * streams (summaries, messages, commander), straight to file descriptors 1 and 2, where the logger writes
 * synchronously so that a killed run's last lines are not lost, and through `console`, which vitest replaces in its
 * workers with one of its own that would keep those lines from the result.
 */
function captureOutput(output: { stdout: string; stderr: string }): () => void {
  const text = (chunk: unknown): string =>
    typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
  const streamWrite =
    (key: 'stdout' | 'stderr') =>
    (chunk: unknown, ...rest: unknown[]): boolean => {
      output[key] += text(chunk);
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    };
  const consoleMethods = { log: 'stdout', info: 'stdout', debug: 'stdout', warn: 'stderr', error: 'stderr' } as const;
  const savedConsole = Object.keys(consoleMethods).map((m) => [m, console[m as keyof typeof consoleMethods]] as const);
  for (const [method, key] of Object.entries(consoleMethods)) {
    console[method as keyof typeof consoleMethods] = (...args: unknown[]) => {
      output[key] += `${format(...args)}\n`;
    };
  }
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  const writeSync = fs.writeSync;
  process.stdout.write = streamWrite('stdout') as typeof process.stdout.write;
  process.stderr.write = streamWrite('stderr') as typeof process.stderr.write;
  fs.writeSync = ((fd: number, data: unknown, ...rest: unknown[]): number => {
    if (fd !== 1 && fd !== 2) return (writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
    const written = text(data);
    output[fd === 1 ? 'stdout' : 'stderr'] += written;
    return Buffer.byteLength(written);
  }) as typeof fs.writeSync;
  return () => {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
    fs.writeSync = writeSync;
    for (const [method, saved] of savedConsole) console[method as keyof typeof consoleMethods] = saved;
  };
}
