/**
 * DuckDB threads for every sync the suite runs, in process (the harness) and through the CLI (vitest.config.ts passes
 * it as GRANTFLOW_DUCKDB_THREADS): a sync of the suite's small sites is ~650 short statements, which one thread serves
 * with ~20 % less CPU than two. test/warehouse/duckdb-settings.test.ts covers DuckDB's own default.
 */
export const suiteDuckdbThreads = 1;
