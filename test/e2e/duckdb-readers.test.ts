/**
 * Analysts keep a DuckDB warehouse open read-only (`duckdb -readonly`, a BI tool). DuckDB lets any number of
 * processes read a file while none writes it, so grantflow's commands that only read (status, snapshot, models test)
 * must open it read-only too, or they are refused for as long as the analyst's connection stays open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { tables } from '../../src/normalize/index.ts';
import { allColumns } from '../../src/warehouse/index.ts';
import { holdDuckDBFile } from '../warehouse/fixtures.ts';
import { runCli, startSite, syncCliArgs, tempDir, writeCredentials } from './harness.ts';

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let warehouse: string;

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 61 });
  dir = await tempDir();
  await writeCredentials(sim, join(dir.path, 'creds.json'));
  warehouse = join(dir.path, 'warehouse.duckdb');
  const r = await runCli(syncCliArgs(sim.url, dir.path));
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
      const r = await runCli(args(command));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(alive(holder.pid)).toBe(true);
      expect(existsSync(`${warehouse}.lock`)).toBe(false);
    } finally {
      await holder.release();
    }
  });

  it('a sync is still refused while the analyst holds it (exit 1, naming the process)', async () => {
    const holder = await holdDuckDBFile(warehouse, { readOnly: true });
    try {
      const r = await runCli(syncCliArgs(sim.url, dir.path));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`held open by process ${holder.pid}, not a grantflow run`);
    } finally {
      await holder.release();
    }
  });
});

describe('a DuckDB warehouse a writer holds open', () => {
  it.each(readCommands)('%s is refused in one line, exit 1, naming the process', async (_name, command) => {
    const holder = await holdDuckDBFile(warehouse);
    try {
      const r = await runCli(args(command));
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
      const r = await runCli(args(['models', 'test']));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`held open by process ${holder.pid}, not a grantflow run`);
    } finally {
      await holder.release();
    }
    expect(await columnExists()).toBe(false);

    const r = await runCli(args(['models', 'test']));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await columnExists()).toBe(true);
  });
});
