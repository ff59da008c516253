/**
 * The live view as a person at an 80×24 terminal sees it: `grantflow sync` runs in a real pseudo-terminal (util-linux
 * `script`), and every byte it writes is rendered by a terminal emulator (@xterm/headless), whose screen is checked
 * after each chunk: a rendered row is what the screen shows, wrapped rows included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import xterm from '@xterm/headless';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { countCliStart } from '../support/cli-count.ts';
import { cliPath, runCli, startSite, syncCliArgs, tempDir, writeCredentials } from '../support/harness.ts';
import { packageRoot } from '../../src/util/package-root.ts';

const columns = 80;
const rows = 24;

interface ScreenRow {
  readonly text: string;
  readonly wrapped: boolean;
}

/** Runs the CLI in a pseudo-terminal of the given size; `onScreen` sees the screen after each chunk it wrote. */
function runInTerminal(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  onScreen: (screen: ScreenRow[], type: (keys: string) => void) => void,
): Promise<{ code: number | null; screen: ScreenRow[] }> {
  countCliStart();
  const term = new xterm.Terminal({ cols: columns, rows, allowProposedApi: true, scrollback: 1000 });
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, cliPath, ...args].map(quote).join(' ');
  const screen = (all = false): ScreenRow[] => {
    const buffer = term.buffer.active;
    const out: ScreenRow[] = [];
    for (let y = all ? 0 : buffer.viewportY; y < buffer.length && (all || y < buffer.viewportY + rows); y++) {
      const line = buffer.getLine(y);
      if (line) out.push({ text: line.translateToString(true), wrapped: line.isWrapped });
    }
    return out;
  };
  return new Promise((resolve, reject) => {
    const child = spawn(
      'script',
      ['-q', '-e', '-f', '-c', `stty cols ${columns} rows ${rows}; exec ${command}`, '/dev/null'],
      {
        cwd: packageRoot,
        env: { ...process.env, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    // What is typed reaches the pseudo-terminal, whose line discipline turns Ctrl-C into SIGINT, as at a keyboard.
    const type = (keys: string): void => void child.stdin.write(keys);
    let chain = Promise.resolve();
    child.stdout.on('data', (chunk: Buffer) => {
      chain = chain.then(
        () => new Promise<void>((done) => term.write(chunk, () => (onScreen(screen(), type), done()))),
      );
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      void chain.then(() => resolve({ code, screen: screen(true) }));
    });
  });
}

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 27 });
  dir = await tempDir();
  await writeCredentials(sim, join(dir.path, 'creds.json'));
});
afterAll(async () => {
  await sim.close();
  await dir.remove();
});

describe('a sync in an 80×24 terminal', () => {
  it('fits every row, shows an overall line with an ETA, and logs for a person, not JSON', async () => {
    const overall: string[] = [];
    const tooWide: string[] = [];
    const json: string[] = [];
    const logged: string[] = [];
    // A slow rate, so the view is redrawn many times before the run ends.
    const args = syncCliArgs(sim.url, dir.path, { rate: 20 });
    const { code, screen } = await runInTerminal(args, { GRANTFLOW_LOG_LEVEL: 'info' }, (rows) => {
      for (const row of rows) {
        if (row.wrapped || row.text.length > columns) tooWide.push(row.text);
        if (/^\s*\{".*":/.test(row.text)) json.push(row.text);
        if (/^(grantflow sync {2})?requests [\d,]+\/~[\d,]+ \(\d+%\) {2}[\d.]+\/s {2}ETA \d+(m\d\ds|s)/.test(row.text))
          overall.push(row.text);
        if (/^\d\d:\d\d:\d\d (INFO|WARN) /.test(row.text)) logged.push(row.text);
      }
    });
    expect(code).toBe(0);
    expect(tooWide).toEqual([]);
    expect(json).toEqual([]);
    expect(overall.length).toBeGreaterThan(0);
    // The log did write lines during the run, so "no JSON" is about them, not about silence.
    expect(logged.length).toBeGreaterThan(0);
    // The whole scrollback too, the summary printed at the end included.
    expect(screen.filter((r) => r.wrapped || r.text.length > columns)).toEqual([]);
    expect(screen.some((r) => /^grantflow run \S+: SUCCEEDED/.test(r.text))).toBe(true);
  });

  it('Ctrl-C ends the view with the streams under way shown as interrupted, not FAILED', async () => {
    let typed = false;
    const ctrlC = join(dir.path, 'ctrl-c');
    const args = syncCliArgs(sim.url, ctrlC, { rate: 5, credentials: join(dir.path, 'creds.json') });
    const { code, screen } = await runInTerminal(args, {}, (rows, type) => {
      // Once the view is up and a stream is under way.
      if (!typed && rows.some((r) => /ETA \d/.test(r.text)) && rows.some((r) => /^ {2}\S+ +\d+ rec/.test(r.text))) {
        typed = true;
        type('\x03');
      }
    });
    const text = screen.map((r) => r.text);
    expect(typed).toBe(true);
    expect(code).toBe(1);
    expect(text.filter((t) => /FAILED|failed/.test(t))).toEqual([]);
    expect(text.some((t) => /^(grantflow sync {2})?requests .* interrupted {2}elapsed/.test(t))).toBe(true);
    expect(text.some((t) => /^ {2}\S+ +\d+ rec .* interrupted$/.test(t))).toBe(true);
    expect(text.some((t) => /^grantflow run \S+: INTERRUPTED/.test(t))).toBe(true);
    expect(text.some((t) => /^ {2}\S+ +interrupted +\d+/.test(t))).toBe(true);
  });

  it('piped, the same sync logs JSON lines, one object each, and draws no view', async () => {
    const piped = await runCli(
      syncCliArgs(sim.url, join(dir.path, 'piped'), { credentials: join(dir.path, 'creds.json') }),
      {
        env: { GRANTFLOW_LOG_LEVEL: 'info' },
      },
    );
    expect(piped.code).toBe(0);
    const lines = piped.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines)
      expect(JSON.parse(line)).toMatchObject({ level: expect.any(String), msg: expect.any(String) });
    expect(piped.stderr).not.toContain('\x1b[');
    expect(lines.some((l) => (JSON.parse(l) as { msg: string }).msg === 'extraction finished')).toBe(true);
  });
});
