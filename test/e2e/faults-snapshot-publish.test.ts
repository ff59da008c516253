/**
 * SIGKILL of `grantflow snapshot` at each step of publishing a snapshot (all files staged, each folder renamed into
 * place, the manifest renamed, half the latest files placed, the pending note removed, retention under way), then a
 * normal run: right after the kill the manifest names a complete snapshot (the last good one, or the new one once its
 * rename happened) and latest/ holds one complete file per table (of either); after the next run no temporary is
 * left, every `snapshot=` folder is one some manifest named, the folder the manifest named before that run is still
 * there (retention keeps 2), since a reader of the manifest may be using it, and latest/ holds what the manifest names.
 * The killed runs are processes (the kill is the subject); the normal runs after them are in process.
 */
import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { syncCliArgs } from '../support/harness.ts';
import {
  checkSnapshotDir,
  cli,
  cliInProcess,
  killOnStderr,
  readManifestFile,
  siteSyncedWithSnapshots,
} from '../support/faults.ts';

let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
let base: string;
let tables: string[];

const folderOf = (entry: { path: string }): string => entry.path.split('/')[1]!;

beforeAll(async () => {
  ({ sim, work, base, tables } = await siteSyncedWithSnapshots(31, 'grantflow-snapshot-publish-'));
});

afterAll(async () => {
  await sim?.close();
  await work?.remove();
});

function snapshotArgs(dir: string): string[] {
  return [
    'snapshot',
    '--warehouse',
    join(dir, 'warehouse.duckdb'),
    '--snapshots',
    join(dir, 'snapshots'),
    '--retain',
    '2',
  ];
}

/** Every name under `dir` that starts with a dot: a temporary or the pending note. */
function hiddenNames(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith('.')) found.push(join(d, e.name));
      else if (e.isDirectory()) walk(join(d, e.name));
    }
  };
  walk(dir);
  return found;
}

const latestSha = (snapshots: string, table: string): string =>
  createHash('sha256')
    .update(readFileSync(join(snapshots, 'latest', `${table}.parquet`)))
    .digest('hex');

const snapshotFolders = (snapshots: string, table: string): string[] =>
  readdirSync(join(snapshots, table)).filter((n) => n.startsWith('snapshot='));

/** Where to kill; `table` picks the table whose step it is, once the table names are known. */
const cases: { label: string; step: (t: string[]) => string; published: boolean }[] = [
  { label: 'all files staged, no folder renamed', step: () => 'snapshot files staged', published: false },
  { label: 'first folder renamed', step: (t) => `snapshot folder placed ${t[0]}`, published: false },
  { label: 'half the folders renamed', step: (t) => `snapshot folder placed ${t[t.length >> 1]}`, published: false },
  { label: 'every folder renamed', step: (t) => `snapshot folder placed ${t[t.length - 1]}`, published: false },
  { label: 'manifest renamed', step: () => 'snapshot manifest written', published: true },
  { label: 'half the latest files placed', step: (t) => `snapshot latest placed ${t[t.length >> 1]}`, published: true },
  { label: 'pending note removed', step: () => 'snapshot published', published: true },
  { label: 'retention under way', step: (t) => `snapshot retention applied ${t[1]}`, published: true },
];

describe('SIGKILL while a snapshot is published, then a normal run', () => {
  it.each(cases.map((c, i) => ({ ...c, i })))('killed once $label', async ({ step: stepOf, published, i }) => {
    const step = stepOf(tables);
    const dir = join(work.path, `case-${i}`);
    cpSync(base, dir, { recursive: true });
    const snapshots = join(dir, 'snapshots');
    const before = readManifestFile(snapshots);

    const killed = await cli(snapshotArgs(dir), {
      env: { GRANTFLOW_TEST_PAUSE_AT: step },
      onSpawn: (child) => killOnStderr(child, `grantflow-test: paused at ${step}`, 1),
    });
    expect(killed.signal, `the kill landed (${killed.stderr.slice(-300)})`).toBe('SIGKILL');
    // A reader of the manifest finds the last good snapshot, or the new one once its rename happened, complete.
    await checkSnapshotDir(snapshots);
    const afterKill = readManifestFile(snapshots);
    if (published) expect(afterKill.run_id).not.toBe(before.run_id);
    else expect(afterKill).toEqual(before);
    // A reader of latest/ finds one complete file per table: the last good snapshot's or the new one's, never none.
    for (const table of tables) {
      expect(
        [before, afterKill].map((m) => m.tables[table]!.sha256),
        `latest of ${table}`,
      ).toContain(latestSha(snapshots, table));
    }

    const next = await cliInProcess(snapshotArgs(dir));
    expect(next.code, next.stderr).toBe(0);
    await checkSnapshotDir(snapshots);
    expect(hiddenNames(snapshots)).toEqual([]);
    const after = readManifestFile(snapshots);
    for (const table of tables) {
      const named = [before, afterKill, after].map((m) => folderOf(m.tables[table]!));
      const present = snapshotFolders(snapshots, table);
      // No folder of the killed run is left unless a manifest named it, and the one the manifest named when the
      // next run started is kept (retention keeps 2) for readers still using it.
      expect(
        present.filter((f) => !named.includes(f)),
        `${table} keeps an unpublished folder`,
      ).toEqual([]);
      expect(present, table).toContain(folderOf(afterKill.tables[table]!));
      expect(present, table).toContain(folderOf(after.tables[table]!));
      // latest/ holds exactly what the manifest names, also when the kill came between the two.
      expect(latestSha(snapshots, table), `latest of ${table}`).toBe(after.tables[table]!.sha256);
    }
    expect(readdirSync(join(snapshots, 'latest')).sort()).toEqual(tables.map((t) => `${t}.parquet`).sort());
  });
});

describe('a snapshot write killed after its first folder was renamed into place', () => {
  it('is undone by the next sync as soon as it holds the lock, not only by its next snapshot write', async () => {
    const step = `snapshot folder placed ${tables[0]}`;
    const dir = join(work.path, 'case-sync');
    cpSync(base, dir, { recursive: true });
    const snapshots = join(dir, 'snapshots');
    const before = readManifestFile(snapshots);
    const unpublished = (): string[] =>
      tables.flatMap((t) => snapshotFolders(snapshots, t).filter((f) => f !== folderOf(before.tables[t]!)));
    const killed = await cli(snapshotArgs(dir), {
      env: { GRANTFLOW_TEST_PAUSE_AT: step },
      onSpawn: (child) => killOnStderr(child, `grantflow-test: paused at ${step}`, 1),
    });
    expect(killed.signal, `the kill landed (${killed.stderr.slice(-300)})`).toBe('SIGKILL');
    expect(unpublished()).toHaveLength(1); // visible to a glob over the folders, never named by a manifest

    // A sync that never reaches its snapshot (killed once its extraction is done) has removed it all the same.
    const pauseAt = 'sync extraction finished';
    const sync = await cli(
      [
        ...syncCliArgs(sim.url, dir, { snapshot: true, credentials: join(work.path, 'creds.json') }),
        '--retain-snapshots',
        '2',
      ],
      {
        env: { GRANTFLOW_TEST_PAUSE_AT: pauseAt },
        onSpawn: (child) => killOnStderr(child, `grantflow-test: paused at ${pauseAt}`, 1),
      },
    );
    expect(sync.signal, `the kill landed (${sync.stderr.slice(-300)})`).toBe('SIGKILL');
    expect(unpublished()).toEqual([]);
    expect(hiddenNames(snapshots)).toEqual([]);
    expect(readManifestFile(snapshots)).toEqual(before);
    await checkSnapshotDir(snapshots);
  });
});
