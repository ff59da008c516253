/**
 * Two snapshot writes into one snapshot directory at once: two `grantflow snapshot` processes on one DuckDB file
 * (each opens it read-only, so DuckDB lets both in), or a sync's snapshot phase while a `grantflow snapshot` of another
 * warehouse writes into the same directory. The first is held at a chosen step of publishing (test pause) while the
 * second runs: the second is refused (exit 1, naming the first), changes nothing, and the first then publishes a
 * complete snapshot. Without the directory's writer lock the second's start removed the first's folders as a killed
 * write's leftovers, and the first's manifest then named files that were gone.
 */
import { cpSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { syncCliArgs, type CliResult } from '../support/harness.ts';
import { checkSnapshotDir, cli, readManifestFile, siteSyncedWithSnapshots } from '../support/faults.ts';

let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
let base: string;
let tables: string[];

const lockName = '.snapshot-writer.lock';

beforeAll(async () => {
  ({ sim, work, base, tables } = await siteSyncedWithSnapshots(47, 'grantflow-snapshot-writers-'));
});

afterAll(async () => {
  await sim?.close();
  await work?.remove();
});

/** A `grantflow snapshot` held at a step of publishing. */
interface Held {
  readonly pid: number;
  readonly resume: () => void;
  readonly done: Promise<CliResult>;
}

/**
 * The refused writer wrote and removed nothing (the held one's folders and the manifest are as they were); the held
 * one, let go, then publishes a complete snapshot.
 */
async function expectUntouchedThenPublished(
  first: Held,
  snapshots: string,
  placed: ReturnType<typeof folders>,
  before: ReturnType<typeof readManifestFile>,
): Promise<void> {
  expect(folders(snapshots)).toEqual(placed);
  expect(readManifestFile(snapshots)).toEqual(before);
  first.resume();
  const finished = await first.done;
  expect(finished.code, finished.stderr).toBe(0);
  await checkSnapshotDir(snapshots);
}

function snapshotArgs(warehouse: string, snapshots: string): string[] {
  return ['snapshot', '--warehouse', warehouse, '--snapshots', snapshots, '--retain', '2'];
}

/**
 * Starts `grantflow snapshot` held at `step` (until it gets SIGTERM); resolves once it is there, with its pid, the
 * way to let it go on, and its result.
 */
async function heldSnapshot(args: string[], step: string): Promise<Held> {
  let child: ChildProcess | undefined;
  let reached: () => void = () => undefined;
  const paused = new Promise<void>((resolve) => (reached = resolve));
  const done = cli(args, {
    // Held until the test lets it go (SIGTERM ends the pause), not for a length of time.
    env: { GRANTFLOW_TEST_PAUSE_AT: step, GRANTFLOW_TEST_PAUSE_MS: '600000' },
    onSpawn: (c) => {
      child = c;
      let seen = '';
      c.stderr?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (seen.includes(`grantflow-test: paused at ${step}`)) reached();
      });
    },
  });
  await Promise.race([
    paused,
    done.then((r) => {
      throw new Error(`exited before ${step}: ${r.stderr.slice(-500)}`);
    }),
  ]);
  return { pid: child!.pid!, resume: () => child!.kill('SIGTERM'), done };
}

/** Every `snapshot=` folder of each table. */
function folders(snapshots: string): Record<string, string[]> {
  return Object.fromEntries(
    tables.map((t) => [t, readdirSync(join(snapshots, t)).filter((n) => n.startsWith('snapshot='))]),
  );
}

describe('two snapshot writes into one directory at once', () => {
  it('a second `grantflow snapshot` of the same DuckDB file is refused while the first publishes', async () => {
    const dir = join(work.path, 'two-snapshots');
    cpSync(base, dir, { recursive: true });
    const snapshots = join(dir, 'snapshots');
    const args = snapshotArgs(join(dir, 'warehouse.duckdb'), snapshots);
    const before = readManifestFile(snapshots);
    // Every folder renamed into place, the manifest not yet written: the moment a second write did the most harm.
    const first = await heldSnapshot(args, `snapshot folder placed ${tables[tables.length - 1]}`);
    const placed = folders(snapshots);

    const second = await cli(args);
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toContain(`pid ${first.pid}`);
    expect(second.stderr).toContain('grantflow snapshot');
    expect(second.stderr).not.toMatch(/\n\s+at /); // one line, no stack
    await expectUntouchedThenPublished(first, snapshots, placed, before);
    expect(readManifestFile(snapshots).run_id).not.toBe(before.run_id);
    expect(existsSync(join(snapshots, lockName)), 'the lock is removed on exit').toBe(false);

    // Released: the next write goes ahead.
    const next = await cli(args);
    expect(next.code, next.stderr).toBe(0);
    await checkSnapshotDir(snapshots);
  });

  it("a sync's snapshot phase meeting another warehouse's snapshot write keeps its load and says so", async () => {
    const dir = join(work.path, 'sync-and-snapshot');
    cpSync(base, dir, { recursive: true });
    const other = join(work.path, 'other-warehouse');
    cpSync(base, other, { recursive: true });
    const snapshots = join(dir, 'snapshots');
    const before = readManifestFile(snapshots);
    const first = await heldSnapshot(
      snapshotArgs(join(other, 'warehouse.duckdb'), snapshots),
      `snapshot folder placed ${tables[tables.length - 1]}`,
    );
    const placed = folders(snapshots);

    const sync = await cli([
      ...syncCliArgs(sim.url, dir, { snapshot: true, credentials: join(work.path, 'creds.json') }),
      '--retain-snapshots',
      '2',
    ]);
    expect(sync.code, sync.stderr).toBe(1);
    expect(sync.stdout).toContain('PARTIAL');
    const line = sync.stdout.split('\n').find((l) => l.includes('snapshots:')) ?? '';
    expect(line).toContain('not written');
    expect(line).toContain(`pid ${first.pid}`);
    expect(line).toContain('the loaded data is committed');
    expect(sync.stdout, 'every stream loaded').not.toContain('FAILED');
    await expectUntouchedThenPublished(first, snapshots, placed, before);
    expect(existsSync(join(snapshots, lockName))).toBe(false);
  });

  it('takes over a lock whose process is gone, saying so', async () => {
    const dir = join(work.path, 'stale');
    cpSync(base, dir, { recursive: true });
    const snapshots = join(dir, 'snapshots');
    // A pid that was a process and no longer is: a writer killed (SIGKILL) before it could remove its lock.
    const gone = spawn(process.execPath, ['-e', '']);
    const pid = gone.pid!;
    await new Promise((resolve) => gone.on('close', resolve));
    writeFileSync(
      join(snapshots, lockName),
      JSON.stringify({ pid, host: (await import('node:os')).hostname(), command: 'grantflow snapshot', since: 'x' }),
    );
    const run = await cli(snapshotArgs(join(dir, 'warehouse.duckdb'), snapshots));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('stale snapshot writer lock');
    expect(run.stderr).toContain(String(pid));
    expect(existsSync(join(snapshots, lockName))).toBe(false);
    await checkSnapshotDir(snapshots);
  });
});
