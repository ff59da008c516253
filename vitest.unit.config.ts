/**
 * `npm run test:unit`: the edit-compile-test loop, in well under a minute. Only tests that need no PostgreSQL and start
 * no process: no global setup provides Postgres (a test that reaches for it meets a closed port) and
 * test/support/unit-guard.ts fails any child_process call. `npm test` and CI run every test, these included.
 */
import { configDefaults, defineConfig } from 'vitest/config';

/** Test files that use PostgreSQL or start processes (the CLI, a holder of a DuckDB file, the simulator's CLI). */
const needsServices = [
  'test/e2e/**',
  'test/models/**',
  'test/docs/dictionary.test.ts',
  'test/docs/examples.test.ts',
  'test/docs/github-actions-example.test.ts',
  'test/docs/github-actions-portfolio.test.ts',
  'test/docs/readme-sql.test.ts',
  'test/simulator/cli.test.ts',
  'test/snapshot/snapshot.test.ts',
  'test/snapshot/writer-lock.test.ts',
  'test/source/credentials-file.test.ts',
  'test/source/retries.test.ts',
  'test/warehouse/load.test.ts',
  'test/warehouse/lock.test.ts',
  'test/warehouse/postgres-*.test.ts',
  'test/warehouse/refresh-mark.test.ts',
  'test/warehouse/schema-evolved-log.test.ts',
  'test/warehouse/upgrade-from-old.test.ts',
  'test/warehouse/values.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...needsServices],
    setupFiles: ['test/support/unit-guard.ts'],
    testTimeout: 60_000,
    pool: 'forks',
    // As in vitest.config.ts: workers and their modules are kept between files.
    isolate: false,
    maxWorkers: 2,
  },
});
