/**
 * `runCliInProcess` (test/support/cli-in-process.ts) stands for a spawned CLI in most of the suite: it must see what
 * the process would (its exit code, stdout and stderr apart, one line and no stack for a refused run, the umask
 * main.ts sets) and leave the test's process as it found it (variables, working folder, exit code, umask, streams).
 */
import { statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { tempDir } from '../support/temp-dir.ts';

let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir('grantflow-run-in-process-');
});

afterAll(async () => {
  await dir?.remove();
});

describe('what a run says', () => {
  it('an unknown command: one line on stderr, nothing on stdout, exit 2 (as main.ts, --help or not)', async () => {
    const r = await runCliInProcess(['frobnicate', '--help']);
    expect(r).toMatchObject({ code: 2, signal: null, stdout: '' });
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^grantflow: unknown command 'frobnicate'/)]);
  });

  it('bad usage: commander’s message on stderr, exit 2', async () => {
    const r = await runCliInProcess(['sync', '--bogus-flag']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      "error: unknown option '--bogus-flag'",
      '(run with --help for usage)',
    ]);
  });

  it('--version: stdout only, exit 0', async () => {
    const r = await runCliInProcess(['--version']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('a refused run: one `grantflow:` line, no stack, exit 2', async () => {
    const folder = join(dir.path, 'a-folder');
    await mkdir(folder);
    const r = await runCliInProcess(['docs', 'dictionary', '--out', folder]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^grantflow: cannot write /)]);
  });

  it('files are written under the umask main.ts sets (owner only), whatever the test’s', async () => {
    const out = join(dir.path, 'dictionary.md');
    const before = process.umask(0o022);
    try {
      const r = await runCliInProcess(['docs', 'dictionary', '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      expect(statSync(out).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(before);
    }
  });
});

describe('the test’s process afterwards', () => {
  it('has its variables, working folder, exit code, umask, streams and process.exit back', async () => {
    const name = 'GRANTFLOW_RUN_IN_PROCESS_TEST';
    process.env[name] = 'before';
    delete process.env.GRANTFLOW_RUN_IN_PROCESS_UNSET;
    const saved = {
      cwd: process.cwd(),
      exitCode: process.exitCode,
      umask: process.umask(),
      stdout: process.stdout.write,
      stderr: process.stderr.write,
      exit: process.exit,
      log: console.log,
      error: console.error,
    };
    try {
      const r = await runCliInProcess(['frobnicate'], {
        cwd: dir.path,
        env: { [name]: 'during', GRANTFLOW_RUN_IN_PROCESS_UNSET: 'set' },
      });
      expect(r.code).toBe(2);
      expect(process.env[name]).toBe('before');
      expect(process.env.GRANTFLOW_RUN_IN_PROCESS_UNSET).toBeUndefined();
      expect({
        cwd: process.cwd(),
        exitCode: process.exitCode,
        umask: process.umask(),
        stdout: process.stdout.write,
        stderr: process.stderr.write,
        exit: process.exit,
        log: console.log,
        error: console.error,
      }).toEqual(saved);
    } finally {
      delete process.env[name];
    }
  });

  it('refuses a second run while one is under way (their output would mix)', async () => {
    const first = runCliInProcess(['--version']);
    await expect(runCliInProcess(['--version'])).rejects.toThrow(/one run at a time/);
    expect((await first).code).toBe(0);
  });
});
