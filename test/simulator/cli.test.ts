import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliPath } from '../../src/util/package-root.ts';
import { countCliStart } from '../support/cli-count.ts';
import { tempDir } from '../support/temp-dir.ts';

const { path: dir, remove: cleanup } = await tempDir('grantflow-sim-cli-');
afterAll(() => cleanup());

function run(
  args: string[],
  cwd = process.cwd(),
): {
  child: ReturnType<typeof spawn>;
  url: Promise<string>;
  exit: Promise<number | null>;
  stderr: () => string;
} {
  countCliStart();
  const child = spawn(process.execPath, [cliPath, 'sim', ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) resolve(m[0]);
    });
    child.once('exit', () => reject(new Error(`exited before listening: ${err}`)));
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url, exit, stderr: () => err };
}

describe('grantflow sim', () => {
  it('serves a site that a plain fetch client walks with the token from --credentials-out', async () => {
    const file = join(dir, 'creds.json');
    const sim = run(['--scale', 'tiny', '--port', '0', '--credentials-out', file, '--rate', '50']);
    try {
      const base = await sim.url;
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const creds = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
      expect(Object.keys(creds).sort()).toEqual(['access_token', 'client_id', 'client_secret', 'refresh_token']);
      let next: string | null = `${base}/api/applications/?per_page=20`;
      const ids: number[] = [];
      while (next) {
        const res = await fetch(next, { headers: { authorization: `Bearer ${creds['access_token']}` } });
        expect(res.status).toBe(200);
        const page = (await res.json()) as { next: string | null; results: { id: number }[] };
        ids.push(...page.results.map((r) => r.id));
        next = page.next;
      }
      expect(ids).toHaveLength(50);
      expect(new Set(ids).size).toBe(50);
    } finally {
      sim.child.kill('SIGTERM');
    }
    expect(await sim.exit).toBe(0);
  });

  it('rejects a bad option with exit code 2 and a clear message', async () => {
    const sim = run(['--scale', 'huge']);
    sim.url.catch(() => undefined);
    expect(await sim.exit).toBe(2);
    expect(sim.stderr()).toContain('--scale must be one of');
  });

  /** Exits on its own (a server left listening would keep it alive), or is killed after 20 s and fails. */
  async function exitsAlone(sim: ReturnType<typeof run>): Promise<number | null> {
    const timer = setTimeout(() => sim.child.kill('SIGKILL'), 20_000);
    try {
      return await sim.exit;
    } finally {
      clearTimeout(timer);
    }
  }
  /** Runs sim with `args` expecting a refusal: its exit code, whether it ever listened, and its stderr lines. */
  async function refusal(
    args: string[],
    cwd?: string,
  ): Promise<{ code: number | null; listened: boolean; lines: string[] }> {
    const sim = run(args, cwd);
    const listened = sim.url.then(
      () => true,
      () => false,
    );
    const code = await exitsAlone(sim);
    return { code, listened: await listened, lines: sim.stderr().trim().split('\n') };
  }

  it('exits 2 with one line when --credentials-out is under a regular file (checked before the site starts)', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'x');
    const sim = run(['--port', '0', '--credentials-out', join(file, 'creds.json')]);
    sim.url.catch(() => undefined);
    expect(await exitsAlone(sim)).toBe(2);
    expect(sim.stderr().trim().split('\n')).toEqual([
      `grantflow: credentials directory ${file} is not writable (${file} is a file, not a directory); choose another --credentials-out`,
    ]);
  });

  it('exits 2 in one line, before listening, and leaves no temporary file when --credentials-out is a directory', async () => {
    const target = join(dir, 'a-directory');
    await mkdir(target);
    const refused = await refusal(['--port', '0', '--credentials-out', target]);
    expect(refused.code).toBe(2);
    expect(refused.listened).toBe(false);
    expect(refused.lines).toEqual([
      `grantflow: cannot write the credentials file ${target} (it is a directory, not a file); choose another --credentials-out`,
    ]);
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it.each(['', '  '])(
    'refuses --credentials-out "%s" as a usage error (exit 2) instead of ignoring it',
    async (value) => {
      // In a folder of its own: without the check, "  " would be written there as a file of that name.
      const refused = await refusal(['--port', '0', '--credentials-out', value], dir);
      expect(refused.code).toBe(2);
      expect(refused.listened).toBe(false);
      expect(refused.lines).toEqual([
        `grantflow: --credentials-out must name a file, got "${value}"; leave it out to write no credentials file`,
      ]);
    },
  );

  it('names a relative --credentials-out resolved against the working directory, as other commands do', async () => {
    const cwd = join(dir, 'relative-cwd');
    await mkdir(join(cwd, 'creds-folder'), { recursive: true });
    await writeFile(join(cwd, 'a-file'), 'x');
    const asDirectory = run(['--port', '0', '--credentials-out', 'creds-folder'], cwd);
    asDirectory.url.catch(() => undefined);
    expect(await exitsAlone(asDirectory)).toBe(2);
    expect(asDirectory.stderr().trim().split('\n')).toEqual([
      `grantflow: cannot write the credentials file ${join(cwd, 'creds-folder')} (it is a directory, not a file); choose another --credentials-out`,
    ]);
    const underFile = run(['--port', '0', '--credentials-out', 'a-file/creds.json'], cwd);
    underFile.url.catch(() => undefined);
    expect(await exitsAlone(underFile)).toBe(2);
    expect(underFile.stderr().trim().split('\n')).toEqual([
      `grantflow: credentials directory ${join(cwd, 'a-file')} is not writable (${join(cwd, 'a-file')} is a file, not a directory); choose another --credentials-out`,
    ]);
  });
});
