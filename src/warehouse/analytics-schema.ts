/**
 * Where the model tables live: a schema of their own beside the one holding grantflow's tables, so analysts browse
 * the models without the raw tables and bookkeeping around them: `analytics` beside the engine's default schema
 * (`main` in DuckDB, `public` in Postgres), `<schema>_analytics` beside any other (a Postgres `--schema`, a portfolio
 * site's `site_<name>`), so two warehouses of one database or file keep their models apart (docs/postgres.md).
 */
export function analyticsSchemaFor(schema: string, defaultSchema = 'public'): string {
  return schema === defaultSchema ? 'analytics' : `${schema}_analytics`;
}

/** Postgres cuts names to 63 bytes: a schema longer than this has no analytics schema name of its own. */
export const maxSchemaLengthWithAnalytics = 63 - '_analytics'.length;
