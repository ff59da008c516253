import { defineConfig } from 'vitest/config';
import { suiteDuckdbThreads } from './test/support/suite-duckdb.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Finds or starts the PostgreSQL every test shares (test/support/postgres-server.ts).
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The JSON report lets .ci/run close with a plain "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest/results.json' },
    // Workers are kept between files and modules are not re-imported per file: 13 % less CPU than a fresh fork per
    // file (import and start-up cost), measured over the whole suite. A file that changes process-wide state puts it
    // back when it ends (spies, environment variables).
    isolate: false,
    // Three on two cores: a third of the suite waits on latency, kills and sleeps rather than CPU (541 s with 2
    // workers, 474 s with 3 and 477 s with 4, with isolation; see docs/testing.md).
    maxWorkers: 3,
    // Spawned CLIs inherit it; in-process syncs take the same number from the harness.
    env: { GRANTFLOW_DUCKDB_THREADS: String(suiteDuckdbThreads) },
  },
});
