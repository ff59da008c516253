/**
 * Where the model tables live: a schema of their own beside the one holding grantflow's tables, so analysts browse
 * the models without the raw tables and bookkeeping around them. DuckDB: `analytics`. Postgres: `analytics` beside the
 * default schema `public`, `<schema>_analytics` beside any other, so two warehouses of one database keep their models
 * apart (docs/postgres.md).
 */
export const duckdbAnalyticsSchema = 'analytics';

/** The analytics schema of a Postgres warehouse whose tables are in `schema`. */
export function analyticsSchemaFor(schema: string): string {
  return schema === 'public' ? 'analytics' : `${schema}_analytics`;
}

/** Postgres cuts names to 63 bytes: a schema longer than this has no analytics schema name of its own. */
export const maxSchemaLengthWithAnalytics = 63 - '_analytics'.length;
