/**
 * Issue 27, on DuckDB and on Postgres: a user's own model (reading a built-in one) and data tests from --models-dir,
 * built and run by a sync; `models run --select` builds only what it names; `models test` repeats its failures with
 * sample rows at the end; a sync of some --streams rebuilds only the models those streams feed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { CellValue } from '../../src/normalize/table-def.ts';
import type { SyncResult } from '../../src/pipeline/sync.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { postgresSchema, startSite, syncOnce, tempDir, writeCredentials } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

const userModel = `-- description: Award rate of the programs with a decision, from the built-in award_rates.
-- column program_id bigint: Program.
-- column award_rate decimal(9,6): As in award_rates.
SELECT program_id, award_rate FROM award_rates WHERE award_rate IS NOT NULL
`;
const passingTest = `-- description: A rate is a fraction.
SELECT * FROM decided_rates WHERE award_rate < 0 OR award_rate > 1
`;
/** Added later: fails on every row of decided_rates (a rate is never 2 or more). */
const failingTest = `-- description: Fails on purpose.
-- severity: error
SELECT program_id, award_rate FROM decided_rates WHERE award_rate < 2
`;

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let pg: Awaited<ReturnType<typeof postgresSchema>>;
let modelsDir: string;
let credentials: string;

beforeAll(async () => {
  sim = await startSite();
  dir = await tempDir('gf-user-models-');
  pg = await postgresSchema();
  credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  modelsDir = join(dir.path, 'my-models');
  await mkdir(join(modelsDir, 'tests'), { recursive: true });
  await writeFile(join(modelsDir, 'decided_rates.sql'), userModel);
  await writeFile(join(modelsDir, 'tests', 'rates_are_fractions.sql'), passingTest);
});
afterAll(async () => {
  await sim?.close();
  await pg?.drop();
  await dir?.remove();
});

describe.each(['duckdb', 'postgres'] as const)('user models on %s', (dialect) => {
  let warehouseArgs: string[];
  let first: SyncResult;
  const target = (): { warehouse: string; schema?: string } =>
    dialect === 'duckdb' ? { warehouse: join(dir.path, 'w.duckdb') } : { warehouse: pg.url, schema: pg.schema };
  async function query(sql: string): Promise<Record<string, CellValue>[]> {
    const t = target();
    const w = await openWarehouse(t.warehouse, { schema: t.schema, logger: silentLogger });
    try {
      return await w.query(sql);
    } finally {
      await w.close();
    }
  }
  const exec = async (sql: string): Promise<void> => void (await query(sql));

  beforeAll(async () => {
    const t = target();
    warehouseArgs = ['--warehouse', t.warehouse, ...(t.schema ? ['--schema', t.schema] : [])];
    first = await syncOnce(sim, { credentials, ...t, modelsDir });
  }, 120_000);

  it('a sync builds the user model after the built-in one it reads and runs the user test', async () => {
    expect(first.status, first.after?.lines.join('\n')).toBe('succeeded');
    const expected = await query(
      'SELECT program_id, award_rate FROM award_rates WHERE award_rate IS NOT NULL ORDER BY program_id',
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(await query('SELECT program_id, award_rate FROM decided_rates ORDER BY program_id')).toEqual(expected);
    const lines = first.after?.lines.join('\n') ?? '';
    expect(lines).toMatch(/decided_rates \(\d+ rows\)/);
    expect(lines).toMatch(/data tests: \d+ passed, 0 failed/);
  });

  it('models run --select builds only the models named', async () => {
    // A row no build of award_rates makes: still there after, so award_rates was not rebuilt; in decided_rates
    // after, so decided_rates was, from the award_rates it found.
    await exec('INSERT INTO award_rates (program_id, award_rate) VALUES (-1, 0.5)');
    const run = await runCliInProcess([
      'models',
      'run',
      '--select',
      'decided_rates',
      '--models-dir',
      modelsDir,
      ...warehouseArgs,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^decided_rates\s+\d+ rows/m);
    expect(run.stdout).toMatch(/^1 models built/m);
    expect(await query('SELECT program_id FROM award_rates WHERE program_id = -1')).toHaveLength(1);
    expect(await query('SELECT program_id FROM decided_rates WHERE program_id = -1')).toHaveLength(1);
  });

  it('models test ends with the failures and their sample rows', async () => {
    await writeFile(join(modelsDir, 'tests', 'rates_below_two.sql'), failingTest);
    try {
      const failing = await query('SELECT program_id, award_rate FROM decided_rates');
      const test = await runCliInProcess(['models', 'test', '--models-dir', modelsDir, ...warehouseArgs]);
      expect(test.code, test.stderr).toBe(1);
      const lines = test.stdout.trimEnd().split('\n');
      const start = lines.indexOf(`not passed (1):`);
      expect(start, test.stdout).toBeGreaterThan(0);
      // The summary comes after every test's own line, then the totals.
      expect(lines.slice(0, start).some((l) => l.startsWith('PASS  rates_are_fractions'))).toBe(true);
      const summary = lines.slice(start + 1);
      const shown = Math.min(failing.length, 5);
      expect(summary[0]).toBe(
        `FAIL rates_below_two: ${failing.length} failing rows${shown < failing.length ? `, first ${shown}` : ''}`,
      );
      const samples = summary.slice(1, 1 + shown).map((l) => JSON.parse(l.trim()) as Record<string, CellValue>);
      for (const s of samples) expect(failing).toContainEqual(s);
      expect(summary[1 + shown]).toMatch(/^\d+ passed, 1 failed, 0 warnings$/);
    } finally {
      await rm(join(modelsDir, 'tests', 'rates_below_two.sql'));
    }
  });

  it('a sync of some --streams rebuilds only the models those streams feed, and says which it skipped', async () => {
    await exec("INSERT INTO fund_utilization (fund_id, fund_name) VALUES (-1, 'not a fund')");
    await exec('INSERT INTO award_rates (program_id, award_rate) VALUES (-2, 0.5)');
    const result = await syncOnce(sim, { credentials, ...target(), modelsDir, streams: ['funds'] });
    expect(result.status, result.after?.lines.join('\n')).toBe('succeeded');
    // fund_utilization reads funds: rebuilt. award_rates reads applications, awards, programs, and decided_rates
    // reads award_rates: neither is fed by the funds stream.
    expect(await query('SELECT fund_id FROM fund_utilization WHERE fund_id = -1')).toHaveLength(0);
    expect(await query('SELECT program_id FROM award_rates WHERE program_id = -2')).toHaveLength(1);
    expect(await query('SELECT program_id FROM decided_rates WHERE program_id = -2')).toHaveLength(0);
    const skipped = result.after?.lines.find((l) => l.startsWith('models skipped'));
    expect(skipped).toMatch(/\baward_rates\b/);
    expect(skipped).toMatch(/\bdecided_rates\b/);
    expect(skipped).not.toMatch(/fund_utilization/);
    expect((result.after?.summary as { modelsSkipped?: string[] }).modelsSkipped).toEqual(
      expect.arrayContaining(['award_rates', 'decided_rates']),
    );
  }, 120_000);
});
