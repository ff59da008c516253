import { defineConfig } from 'vitest/config';

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
    maxWorkers: 2,
    // Spawned CLIs inherit it (in-process syncs get it from the harness): the suite's syncs are ~650 short DuckDB
    // statements each, which one thread serves with ~20 % less CPU; test/warehouse/duckdb-settings covers the default.
    env: { GRANTFLOW_DUCKDB_THREADS: '1' },
  },
});
