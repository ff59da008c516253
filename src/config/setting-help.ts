import { flagName, settingKinds, type SettingKey } from './settings.ts';

/**
 * What each setting does, in one line: the text of its `--flag` in `--help` and of its row in docs/settings.md
 * (`grantflow docs settings`), so the two cannot drift apart.
 */
export const settingHelp: Readonly<Record<SettingKey, string>> = {
  site: 'root URL of the site, e.g. https://yoursite.example.com (without /api)',
  credentials:
    'credentials JSON file {client_id, client_secret, access_token, refresh_token}; rewritten (0600) on each token refresh',
  warehouse:
    'DuckDB file path or postgres:// URL (default data/warehouse.duckdb); a Postgres schema is set by --schema, not in the URL',
  schema:
    'Postgres schema for the tables: letters, digits, underscores (default public; a sync or replay creates it if missing). With a DuckDB file only status, report and query read it (a portfolio site, site_<name>); other commands refuse it',
  duckdbMemoryLimit:
    'memory DuckDB may use before it spills to <warehouse>.tmp/, e.g. 256MB or 2GB, at least 64MB (default 256MB; ignored for Postgres)',
  duckdbThreads:
    "threads DuckDB runs statements on (default DuckDB's: one per core; ignored for Postgres). A sync of a small site runs many short statements, which one thread serves with ~20 % less CPU",
  snapshots: 'directory or s3://bucket/prefix URL for Parquet snapshots (default data/snapshots)',
  s3ForcePathStyle:
    'address the bucket as <endpoint>/<bucket> (path style), as MinIO and most self-hosted S3 stores need (default false)',
  rawDir: 'directory for raw pages, one folder per run (default data/raw)',
  landRaw: 'keep every fetched page under the raw dir (default true)',
  keepRawRuns:
    'raw page folders of this many recent runs are kept; older ones are removed after a successful sync (default 5)',
  streams:
    'comma-separated streams to sync (default all); a fan-out stream brings its parent; only the models reading what they load are rebuilt',
  fullRefresh: "fetch every parent's children again, not only changed ones, and read append-only logs whole",
  fullRefreshAfterDays: 'do a full refresh of fan-out streams when the last one is older than this (default 7)',
  fullRefreshMode:
    "all-at-once: every parent's children again once the last full refresh is older than --full-refresh-after-days; rolling: in each run those of the 1/N of parents read longest ago (N = those days), so runs cost the same (default all-at-once)",
  maxDuration:
    'time budget, e.g. 5h30m: near it no new request starts, what was fetched is committed and the run ends paused (exit 0); the next sync continues it (default none)',
  maxStreamDuration:
    "time limit of each stream, e.g. 2h: past it the stream's list walks stop, what was read is committed (the next sync continues a list where it stopped) and the stream fails (exit 1); bounds a site whose lists never end (default 6h)",
  refreshReports:
    'report ids (or all) to generate with a report job before reading them, so their new files are downloaded (default none: it writes to the site)',
  refreshReportsTimeout: 'seconds to wait for --refresh-reports jobs to finish generating (default 600)',
  siteMoved:
    'the site moved to --site: accept a warehouse whose last sync was of its old address, once (default false: a sync of another site is refused)',
  rate: 'requests per second the site allows (default 5)',
  perPage: 'page size to ask for (default 100; see --detect-page-size)',
  detectPageSize:
    'find the largest page size the site honours (up to 500) with one request, once per warehouse, and read lists with it; a site refusing it keeps --per-page (default true, unless --per-page sets another size)',
  concurrency: 'requests in flight at once (default 8)',
  siteTimeZone: 'IANA time zone of timestamps the site sends without one (default UTC)',
  retainSnapshots: 'snapshots kept per table (default 7; 2 or more while readers follow the manifest)',
  personalData:
    'personal data in snapshots and the report: keep (default), pseudonymize (identifiers as keyed tokens, key from GRANTFLOW_PSEUDONYM_KEY; no free text) or drop (neither); docs/privacy.md',
  purgeDeletedAfter:
    'purge rows soft-deleted longer than this, e.g. 90d (0s: every deleted row; default: never): their rows, raw pages and older snapshots go; docs/privacy.md',
  models:
    'run the SQL models and data tests after loading (default true; with false, snapshots are written without the data tests having checked them)',
  modelsDir:
    'directory of your own SQL models (DIR/*.sql) and data tests (DIR/tests/*.sql), built and run with the built-in ones (default: none)',
  snapshot: 'write Parquet snapshots after a successful sync (default true)',
  snapshotRaw:
    "keep each row's source JSON (_raw) in the Parquet snapshots, about half their size (default false: it stays in the warehouse)",
  report: 'directory to write the HTML report into after each successful sync (default: none; see docs/report.md)',
  logLevel: 'fatal|error|warn|info|debug|trace|silent (default info)',
  promote:
    'JSON list of unmapped source paths to make typed columns, e.g. [{"stream":"applications","path":"extra.score","column":"score","type":"integer"}] (types json, integer, number, text, boolean, reference; default none; see docs/drift.md)',
};

/** The option as `--help` shows it: `--per-page <n>`, `--models [bool]`, `--streams <a,b>`. */
export function flagSyntax(key: SettingKey): string {
  const kind = settingKinds[key];
  const value = { boolean: '[bool]', list: '<a,b>', number: '<n>', json: '<json>', string: '<value>' }[kind];
  return `--${flagName(key)} ${value}`;
}
