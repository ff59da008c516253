/**
 * docs/settings.md against the program itself: every option `--help` shows as a setting has its row, naming the
 * command, and nothing else is listed; the committed page is the generated one; and `docs settings --check` tells a
 * stale page from a fresh one. Also every command's `--help` fits a 120-column terminal. In process: no child.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildProgram } from '../../src/cli/program.ts';
import { commandPaths, commandsBySetting } from '../../src/cli/settings-usage.ts';
import { renderSettingsReference, settingsReferencePath } from '../../src/docs/settings-reference.ts';
import { tempDir } from '../support/temp-dir.ts';

/** The page's table rows, by the option's long flag (`--per-page`): the variable cell and the commands cell. */
function rowsByFlag(page: string): Map<string, { variable: string; commands: string[] }> {
  const rows = new Map<string, { variable: string; commands: string[] }>();
  for (const line of page.split('\n')) {
    const cells = /^\| `(--[a-z0-9-]+)[^`]*` \| ([^|]+) \|.*\| ([^|]*) \|$/.exec(line);
    if (cells) rows.set(cells[1]!, { variable: cells[2]!.trim(), commands: cells[3]!.split(', ').filter(Boolean) });
  }
  return rows;
}

/** What `--help` prints for a command, the text added after the options included. */
function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) });
  command.outputHelp();
  return text;
}

describe('the settings reference, docs/settings.md', () => {
  const program = buildProgram();
  const page = renderSettingsReference(commandsBySetting(program));

  it('the committed page is up to date (run `grantflow docs settings`)', () => {
    expect(readFileSync(settingsReferencePath, 'utf8')).toBe(page);
  });

  it("lists, for every option `--help` marks with a variable or as a flag only, that command in the flag's row", () => {
    const rows = rowsByFlag(page);
    let settingOptions = 0;
    for (const { path, command } of commandPaths(program)) {
      for (const option of command.options) {
        const marker = /\[(env (GRANTFLOW_[A-Z0-9_]+)|flag only)\]$/.exec(option.description);
        const row = rows.get(option.long ?? '');
        if (!marker || option.long === '--pipeline') {
          // A plain option (`sim --rate`, `status --runs`): its command is not among a setting's readers.
          expect(row?.commands ?? [], `${path} ${option.long}`).not.toContain(path);
          continue;
        }
        settingOptions++;
        expect(row, `${path} ${option.long} has a row`).toBeDefined();
        expect(row!.commands, `${path} ${option.long}`).toContain(path);
        expect(row!.variable).toBe(marker[2] ? `\`${marker[2]}\`` : '(flag only)');
      }
    }
    expect(settingOptions).toBeGreaterThan(rows.size);
    // Each row names only commands that have the option.
    const byPath = new Map(commandPaths(program).map(({ path, command }) => [path, command]));
    for (const [flag, row] of rows)
      for (const path of row.commands) {
        const command = byPath.get(path);
        expect(
          command?.options.some((o) => o.long === flag),
          `${path} ${flag}`,
        ).toBe(true);
      }
  });

  it('shows each help text as written, with nothing Markdown would swallow', () => {
    const row = page.split('\n').find((line) => line.startsWith('| `--duckdb-memory-limit'));
    expect(row).toContain('spills to \\<warehouse>.tmp/');
    const models = page.split('\n').find((line) => line.startsWith('| `--models-dir'));
    expect(models).toContain('(DIR/\\*.sql)');
  });
});

describe('`grantflow docs settings`', () => {
  let work: { path: string; remove: () => Promise<void> };
  const written: string[] = [];
  beforeAll(async () => {
    work = await tempDir('gf-settings-doc-');
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });
  afterAll(async () => {
    await work?.remove();
  });

  /** Runs the command in process; its exit code and what it printed. */
  async function docsSettings(...args: string[]): Promise<{ code: number; out: string }> {
    written.length = 0;
    const capture = (s: string | Uint8Array): boolean => (written.push(String(s)), true);
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    await buildProgram().parseAsync(['docs', 'settings', ...args], { from: 'user' });
    vi.restoreAllMocks();
    const code = Number(process.exitCode ?? 0);
    process.exitCode = undefined;
    return { code, out: written.join('') };
  }

  it('--check exits 1 on a stale page, and 0 once the command has written it', async () => {
    const out = join(work.path, 'settings.md');
    writeFileSync(out, '# stale\n');
    const stale = await docsSettings('--check', '--out', out);
    expect(stale).toEqual({
      code: 1,
      out: `grantflow: ${out} is stale; run \`grantflow docs settings\` and commit the result\n`,
    });
    expect(readFileSync(out, 'utf8')).toBe('# stale\n');
    expect(await docsSettings('--out', out)).toEqual({ code: 0, out: `wrote ${out}\n` });
    expect(readFileSync(out, 'utf8')).toBe(renderSettingsReference(commandsBySetting(buildProgram())));
    expect(await docsSettings('--check', '--out', out)).toEqual({ code: 0, out: `${out} is up to date\n` });
  });

  it('a folder it cannot write is one line, exit 2', async () => {
    const blocked = join(work.path, 'a-file');
    writeFileSync(blocked, '');
    const result = await docsSettings('--out', join(blocked, 'settings.md'));
    expect(result.code).toBe(2);
    expect(result.out).toMatch(/^grantflow: cannot write .*settings\.md \(.*\); choose another path with --out\n$/);
  });
});

describe('--help', () => {
  it("every command's help fits a terminal of 120 columns", () => {
    const program = buildProgram();
    const wide = [{ path: 'grantflow', command: program }, ...commandPaths(program)].flatMap(({ path, command }) =>
      helpOf(command)
        .split('\n')
        .filter((line) => line.length > 120)
        .map((line) => `${path}: ${line.slice(0, 60)}… (${line.length})`),
    );
    expect(wide).toEqual([]);
  });
});
