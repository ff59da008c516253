/**
 * A DuckDB warehouse whose folder was made read-only between runs (the file itself still writable by the user): a
 * writer needs the folder for DuckDB's .wal and its lock note, so a sync is refused at once (exit 2, one line naming
 * the folder, nothing written) instead of crashing as a bug on the note or on its first commit; once the folder is
 * writable again, the next sync resumes and equals a lone sync. Run as an unprivileged user (root writes anywhere).
 */
import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import {
  cliPath,
  dumpWarehouse,
  referenceDump,
  startSite,
  summarize,
  syncCliArgs,
  tempDir,
  writeCredentials,
  type CliResult,
  type TableDump,
} from '../support/harness.ts';
import { packageRoot } from '../../src/util/package-root.ts';
import { countCliStart } from '../support/cli-count.ts';
import { cli, expectSameWarehouse, killWhen } from '../support/faults.ts';

const root = process.getuid?.() === 0;
let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
let reference: Record<string, TableDump>;

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 37, latency: { ms: 5 } });
  work = await tempDir('grantflow-faults-readonly-');
  await chmod(work.path, 0o755);
  reference = await referenceDump(sim, work.path);
});

afterAll(async () => {
  await sim?.close();
  await work?.remove();
});

/** `grantflow <args>` as an unprivileged user: `nobody` when the tests run as root. */
function cliUnprivileged(args: readonly string[]): Promise<CliResult> {
  countCliStart();
  const argv = [process.execPath, cliPath, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(root ? 'runuser' : argv[0]!, root ? ['-u', 'nobody', '--', ...argv] : argv.slice(1), {
      cwd: packageRoot,
      env: { ...process.env, GRANTFLOW_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Gives the unprivileged user these files and folders, with all they hold (when the tests run as root). */
async function handOver(paths: readonly string[]): Promise<void> {
  if (root) await promisify(execFile)('chown', ['-R', 'nobody:', ...paths]);
}

describe('a DuckDB warehouse whose folder was made read-only between runs', () => {
  it.each(['finished', 'killed'])(
    'after a %s run: refused (exit 2, nothing written); writable again, the next sync equals a lone sync',
    async (previous) => {
      const dir = join(work.path, previous);
      const folder = join(dir, 'warehouse');
      await mkdir(folder, { recursive: true });
      const credentials = await writeCredentials(sim, join(dir, 'creds.json'));
      const warehouse = join(folder, 'warehouse.duckdb');
      const args = syncCliArgs(sim.url, dir, { credentials, warehouse: ['--warehouse', warehouse] });
      sim.control.resetCounts();
      const first = await cli(args, {
        onSpawn: (child) => {
          if (previous === 'killed') killWhen(child, () => sim.control.counts().total >= 60);
        },
      });
      if (previous === 'killed') expect(first.signal, first.stderr).toBe('SIGKILL');
      else expect(first.code, first.stderr).toBe(0);
      const before = summarize(await dumpWarehouse(warehouse));

      await mkdir(join(dir, 'raw'), { recursive: true });
      // The user owns the folder and all in it (a killed run's .wal and lock note too), but may not write it now.
      await handOver([folder, credentials, join(dir, 'raw')]);
      await chmod(folder, 0o555);
      try {
        const refused = await cliUnprivileged(args);
        expect(refused.code, refused.stderr).toBe(2);
        const lines = refused.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));
        expect(lines).toEqual([
          `grantflow: warehouse folder ${folder} is not writable (permission denied); a writer needs it for ` +
            "DuckDB's .wal file and the lock note; fix its permissions or choose another --warehouse",
        ]);
      } finally {
        await chmod(folder, 0o755);
      }
      expect(summarize(await dumpWarehouse(warehouse))).toEqual(before);

      const next = await cliUnprivileged(args);
      expect(next.code, next.stderr).toBe(0);
      if (previous === 'killed') expect(next.stdout).toMatch(/\(resumed\)/);
      await expectSameWarehouse(warehouse, reference);
    },
  );
});
