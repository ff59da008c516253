/**
 * Analysts keep a DuckDB warehouse open read-only (`duckdb -readonly`, a BI tool). DuckDB lets any number of
 * processes read a file while none writes it, so grantflow's commands that only read (status, snapshot, models test)
 * must open it read-only too, or they are refused for as long as the analyst's connection stays open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ChildProcess } from 'node:child_process';

import { readdirSync } from 'node:fs';

import { join } from 'node:path';

import { DuckDBInstance } from '@duckdb/node-api';

import type { SimulatorHandle } from '../../src/simulator/index.ts';

import { allColumns } from '../../src/warehouse/index.ts';

import { holdDuckDBFile } from '../support/warehouse-fixtures.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

import { runCli, startSite, syncCliArgs, tempDir, writeCredentials, type CliResult } from '../support/harness.ts';
import { tables } from '../../src/streams/registry.ts';

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let warehouse: string;

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 61 });
  dir = await tempDir();
  await writeCredentials(sim, join(dir.path, 'creds.json'));
  warehouse = join(dir.path, 'warehouse.duckdb');
  const r = await runCliInProcess(syncCliArgs(sim.url, dir.path));
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
});
afterAll(async () => {
  await sim?.close();
  await dir?.remove();
});

const readCommands: [string, string[]][] = [
  ['status', ['status']],
  ['snapshot', ['snapshot', '--snapshots', 'SNAPSHOTS']],
  ['models test', ['models', 'test']],
];

function args(command: string[]): string[] {
  return [...command.map((a) => (a === 'SNAPSHOTS' ? join(dir.path, 'snapshots') : a)), '--warehouse', warehouse];
}

/** The warehouse's lock notes: the writer's `.lock` and each reader's `.lock.<pid>`. */
function lockNotes(): string[] {
  return readdirSync(dir.path).filter((n) => n.startsWith('warehouse.duckdb.lock'));
}

/** Whether a process with that pid still runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a DuckDB warehouse an analyst holds open read-only', () => {
  it.each(readCommands)('%s runs alongside it (exit 0) and leaves no lock note behind', async (_name, command) => {
    const holder = await holdDuckDBFile(warehouse, { readOnly: true });
    try {
      const r = await runCliInProcess(args(command));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(alive(holder.pid)).toBe(true);
      expect(lockNotes()).toEqual([]);
    } finally {
      await holder.release();
    }
  });

  it('a sync is still refused while the analyst holds it (exit 1, naming the process)', async () => {
    const holder = await holdDuckDBFile(warehouse, { readOnly: true });
    try {
      const r = await runCliInProcess(syncCliArgs(sim.url, dir.path));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`held open by process ${holder.pid}, not a grantflow run`);
    } finally {
      await holder.release();
    }
  });
});

/** A `grantflow snapshot` paused with the warehouse open read-only, until `finish` signals it to go on. */
async function pausedSnapshot(label: string): Promise<{ pid: number; finish: () => Promise<CliResult> }> {
  const step = 'snapshot files staged';
  let child: ChildProcess | undefined;
  let reached!: () => void;
  const paused = new Promise<void>((resolve) => (reached = resolve));
  const done = runCli(['snapshot', '--snapshots', join(dir.path, `snapshots-${label}`), '--warehouse', warehouse], {
    env: { GRANTFLOW_TEST_PAUSE_AT: step, GRANTFLOW_TEST_PAUSE_MS: '120000' },
    onSpawn: (c) => {
      child = c;
      c.stderr?.on('data', (d: Buffer) => {
        if (d.toString().includes(`grantflow-test: paused at ${step}`)) reached();
      });
    },
  });
  await Promise.race([paused, done.then((r) => Promise.reject(new Error(`snapshot ended early: ${r.stderr}`)))]);
  return {
    pid: child!.pid!,
    finish: () => {
      child!.kill('SIGTERM');
      return done;
    },
  };
}

describe('a DuckDB warehouse two grantflow readers hold open', () => {
  it('a sync refused names a grantflow run, whichever reader DuckDB names, and the one left once the first is done', async () => {
    const first = await pausedSnapshot('first');
    const second = await pausedSnapshot('second');
    let finished = false;
    try {
      const both = await runCliInProcess(syncCliArgs(sim.url, dir.path));
      expect(both.code).toBe(1);
      const named = /in use by another grantflow run \(pid (\d+), grantflow snapshot \(pid (\d+)\)\)/.exec(both.stderr);
      expect(named, both.stderr).not.toBeNull();
      expect([first.pid, second.pid]).toContain(Number(named![1]));
      expect(named![2]).toBe(named![1]);

      const firstDone = await first.finish();
      expect(firstDone.code, firstDone.stderr).toBe(0);
      const one = await runCliInProcess(syncCliArgs(sim.url, dir.path));
      expect(one.code).toBe(1);
      expect(one.stderr.trim().split('\n')).toEqual([
        `grantflow: warehouse ${warehouse} is in use by another grantflow run ` +
          `(pid ${second.pid}, grantflow snapshot (pid ${second.pid})); wait for it to finish or stop it, then retry`,
      ]);
      const secondDone = await second.finish();
      finished = true;
      expect(secondDone.code, secondDone.stderr).toBe(0);
    } finally {
      if (!finished) {
        await first.finish();
        await second.finish();
      }
    }
    expect(lockNotes()).toEqual([]);
  });
});

describe('a grantflow run that has opened the file but not yet written its note', () => {
  it('a sync refused then still names the grantflow run, not "a duckdb shell", once its note appears', async () => {
    // The snapshot holds the file open read-only, paused before its note; it writes it and goes on after the pause.
    const step = 'duckdb lock note';
    let child: ChildProcess | undefined;
    let reached!: () => void;
    const paused = new Promise<void>((resolve) => (reached = resolve));
    const snapshot = runCli(['snapshot', '--snapshots', join(dir.path, 'snapshots-early'), '--warehouse', warehouse], {
      env: { GRANTFLOW_TEST_PAUSE_AT: step, GRANTFLOW_TEST_PAUSE_MS: '2500' },
      onSpawn: (c) => {
        child = c;
        c.stderr?.on('data', (d: Buffer) => {
          if (d.toString().includes(`grantflow-test: paused at ${step}`)) reached();
        });
      },
    });
    await Promise.race([paused, snapshot.then((r) => Promise.reject(new Error(`snapshot ended early: ${r.stderr}`)))]);
    expect(lockNotes()).toEqual([]);
    const refused = await runCliInProcess(syncCliArgs(sim.url, dir.path));
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([
      `grantflow: warehouse ${warehouse} is in use by another grantflow run ` +
        `(pid ${child!.pid}, grantflow snapshot (pid ${child!.pid})); wait for it to finish or stop it, then retry`,
    ]);
    const done = await snapshot;
    expect(done.code, done.stderr).toBe(0);
    expect(lockNotes()).toEqual([]);
  });
});

describe('a DuckDB warehouse a writer holds open', () => {
  it.each(readCommands)('%s is refused in one line, exit 1, naming the process', async (_name, command) => {
    const holder = await holdDuckDBFile(warehouse);
    try {
      const r = await runCliInProcess(args(command));
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([
        `grantflow: warehouse ${warehouse} is held open for writing by process ${holder.pid}, not a grantflow run ` +
          '(a duckdb shell or BI tool?); close it, or have it open the file read-only (duckdb -readonly), then retry',
      ]);
    } finally {
      await holder.release();
    }
  });
});

describe('models test on a warehouse an older version wrote (a column missing)', () => {
  const table = tables.find((t) => t.name === 'applications')!;
  const column = allColumns(table).at(-1)!.name;

  async function columnExists(): Promise<boolean> {
    const instance = await DuckDBInstance.create(warehouse, { access_mode: 'READ_ONLY' });
    try {
      const connection = await instance.connect();
      const reader = await connection.runAndReadAll(
        `SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'applications' AND column_name = '${column}'`,
      );
      connection.closeSync();
      return Number(reader.getRowObjects()[0]?.n) === 1;
    } finally {
      instance.closeSync();
    }
  }

  it('must migrate it, so it opens the file to write: refused while an analyst reads, then migrates it', async () => {
    const instance = await DuckDBInstance.create(warehouse);
    const connection = await instance.connect();
    await connection.run(`ALTER TABLE applications DROP COLUMN ${column}`);
    connection.closeSync();
    instance.closeSync();
    expect(await columnExists()).toBe(false);

    const holder = await holdDuckDBFile(warehouse, { readOnly: true });
    try {
      const r = await runCliInProcess(args(['models', 'test']));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`held open by process ${holder.pid}, not a grantflow run`);
    } finally {
      await holder.release();
    }
    expect(await columnExists()).toBe(false);

    const r = await runCliInProcess(args(['models', 'test']));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await columnExists()).toBe(true);
  });
});
