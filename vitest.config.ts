import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: files run in parallel, but heavy e2e files are few and bounded.
    pool: 'forks',
    maxWorkers: 2,
  },
});
