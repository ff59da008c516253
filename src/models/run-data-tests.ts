import type { CellValue, TableDef } from '../normalize/table-def.ts';

import type { Warehouse } from '../warehouse/types.ts';

import { firstLine } from '../util/errors.ts';

import { genericTests, type DataTestDef, type Severity } from './generic-tests.ts';

import { loadAllSqlTests, loadSqlTests } from './model-files.ts';
import { tables as catalog } from '../streams/registry.ts';

export interface DataTestResult {
  readonly name: string;
  readonly description: string;
  readonly severity: Severity;
  /** pass: no failing rows; fail: some; error: the test query itself failed (see message). */
  readonly status: 'pass' | 'fail' | 'error';
  readonly failing: number;
  /** Up to `sampleSize` failing rows. */
  readonly sample: readonly Record<string, CellValue>[];
  readonly message?: string;
}

export interface DataTestOptions {
  /** Catalog to generate tests from (default: the warehouse catalog). */
  readonly tables?: readonly TableDef[];
  /** Directory of the SQL tests (default: the package's `models/tests/`, plus `userDir`'s `tests/`). */
  readonly testsDir?: string;
  /** The user's `--models-dir`: its `tests/` run after the built-in ones. */
  readonly userDir?: string;
  /** Run these tests instead of every one (`models test --select`). */
  readonly tests?: readonly DataTestDef[];
  readonly sampleSize?: number;
}

/** Every data test: generated ones first, then the SQL ones of `models/tests/`. */
export function dataTests(options: DataTestOptions = {}): DataTestDef[] {
  const sql = options.testsDir ? loadSqlTests(options.testsDir) : loadAllSqlTests(options.userDir);
  return [...genericTests(options.tables ?? catalog), ...sql];
}

async function runOne(warehouse: Warehouse, test: DataTestDef, sampleSize: number): Promise<DataTestResult> {
  const base = { name: test.name, description: test.description, severity: test.severity };
  try {
    // Its own tables only: on Postgres an unqualified name would otherwise fall through to `public`. On lines of
    // their own, so a comment ending the test's SQL does not swallow the closing parenthesis.
    const [count] = await warehouse.queryOwnTables(`SELECT count(*) AS n FROM (\n${test.sql}\n) failing`);
    const failing = Number(count?.n ?? 0);
    if (failing === 0) return { ...base, status: 'pass', failing, sample: [] };
    const sample = await warehouse.queryOwnTables(`SELECT * FROM (\n${test.sql}\n) failing LIMIT ${sampleSize}`);
    return { ...base, status: 'fail', failing, sample };
  } catch (e) {
    return { ...base, status: 'error', failing: 0, sample: [], message: firstLine(e) };
  }
}

/** Runs every data test; a failing query is reported as status `error`, never thrown. */
export async function runDataTests(warehouse: Warehouse, options: DataTestOptions = {}): Promise<DataTestResult[]> {
  const results: DataTestResult[] = [];
  for (const test of options.tests ?? dataTests(options))
    results.push(await runOne(warehouse, test, options.sampleSize ?? 5));
  return results;
}

/** An error-level test that failed or could not run makes the run fail (exit 1). */
export function hasErrorFailures(results: readonly DataTestResult[]): boolean {
  return results.some((r) => r.severity === 'error' && r.status !== 'pass');
}
