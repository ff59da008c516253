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
  },
});
