/**
 * Whether Postgres server options (`-c name=value`, `--name=value`, as in a URL's `options` or `PGOPTIONS`) set
 * search_path, in any of its spellings (`-csearch_path=`, `--search-path=`, any case). grantflow sets its own search
 * path after them (warehouse/postgres/pool.ts), so the schema they name would be silently ignored: they are refused
 * instead, by the settings' validation and by the pool (for PGOPTIONS).
 */
export function setsSearchPath(options: string): boolean {
  return /(?:^|\s)(?:-c\s*|--)search[_-]path\s*=/i.test(options);
}
