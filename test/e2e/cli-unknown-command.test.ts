/**
 * A command name grantflow does not know, at the top level or under a command that only groups others, is one line
 * naming what was wrong and exit 2, `--help` given or not: a script must not read a typo as success. Run in process
 * (`runCommandLine`, what main.ts runs), but for one case through the real process, whose exit code a script reads.
 */
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { runCli } from '../support/harness.ts';

describe('unknown or missing commands', () => {
  it.each([[['frobnicate', '--help']], [['frobnicate']], [['--help', 'frobnicate']]])(
    'grantflow %j: one line naming the command, exit 2',
    async (args) => {
      const r = await runCliInProcess(args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/unknown command 'frobnicate'/);
    },
  );

  it.each([[['models', '--warehouse', 'x']], [['models']], [['models', 'frobnicate']]])(
    'grantflow %j: says models needs run or test, exit 2',
    async (args) => {
      const r = await runCliInProcess(args);
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/`models` needs a command: grantflow models run\|test/);
      expect(lines[0]).not.toMatch(/unknown option/);
    },
  );

  it('a known command with --help still prints its help, exit 0', async () => {
    const r = await runCliInProcess(['models', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: grantflow models/);
  });

  it('the process exits 2 as well, one line on stderr, nothing on stdout', async () => {
    const r = await runCli(['frobnicate', '--help']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/unknown command 'frobnicate'/)]);
  });
});
