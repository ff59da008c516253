/**
 * Whether Postgres server options (`-c name=value`, `--name=value`, as in a URL's `options` or `PGOPTIONS`) set
 * search_path, in any of its spellings (`-csearch_path=`, `--search-path=`, any case). grantflow sets its own search
 * path after them (warehouse/postgres/pool.ts), so the schema they name would be silently ignored: they are refused
 * instead, by the settings' validation and by the pool (for PGOPTIONS).
 */
export function setsSearchPath(options: string): boolean {
  return /(?:^|\s)(?:-c\s*|--)search[_-]path\s*=/i.test(options);
}

/** Why a search_path in server options is refused, and what to use instead: said by both places that refuse it. */
export const searchPathIsOurs =
  "grantflow sets the search path to the --schema setting (default public), its models' schema, then public, so the " +
  'tables would not land in the schema named there; use --schema, GRANTFLOW_SCHEMA or the pipeline key "schema"';
