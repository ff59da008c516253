/**
 * Issue 44: every file a sync writes (warehouse, spill folder, raw pages, snapshots, manifest, report, credentials)
 * is owner-only whatever the umask of the process that starts it. The process start is the subject, so one CLI is
 * spawned under umask 000.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { countCliStart } from '../support/cli-count.ts';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { cliPath, packageRoot } from '../../src/util/package-root.ts';
import { siteWithWarehouse, syncCliArgs } from '../support/harness.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo();
});

/** Every path under `root` (not root itself), folders included. */
async function walk(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    found.push(path);
    if (entry.isDirectory()) found.push(...(await walk(path)));
  }
  return found;
}

function runUnderUmask000(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const quoted = [process.execPath, cliPath, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  countCliStart();
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `umask 000; exec ${quoted}`], {
      cwd: packageRoot,
      env: { ...process.env, GRANTFLOW_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('file modes', () => {
  it('a sync under umask 000 leaves nothing readable or writable by group or others', async () => {
    const { sim, dir, remove } = await siteWithWarehouse();
    cleanup.push(remove);
    const args = [...syncCliArgs(sim.url, dir, { snapshot: true }), '--report', join(dir, 'report')];
    const result = await runUnderUmask000(args);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);

    const paths = await walk(dir);
    // The run wrote each kind of file this test is about; an empty walk would prove nothing.
    for (const part of ['warehouse.duckdb', 'snapshots', 'raw', 'report', 'creds.json']) {
      expect(paths.some((p) => p.includes(join(dir, part)))).toBe(true);
    }
    const open: string[] = [];
    for (const path of paths) {
      const mode = (await lstat(path)).mode & 0o777;
      if ((mode & 0o077) !== 0) open.push(`${path.slice(dir.length)} ${mode.toString(8)}`);
    }
    expect(open).toEqual([]);
  });
});
