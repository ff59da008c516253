import { promotionTypes } from '../normalize/promotions.ts';
import { z } from 'zod';
import { searchPathIsOurs, setsSearchPath } from './postgres-options.ts';
import { snapshotTargetProblem } from './snapshot-location.ts';
import { durationMs, durationOrZeroMs } from './duration.ts';

/**
 * DuckDB's memory limit unless told otherwise: DuckDB's documented minimum of ~125 MB per thread for its two
 * threads here. Its own default (80 % of RAM) lets the embedded warehouse grow with the data; past the limit it
 * spills to `<warehouse>.tmp/`.
 */
export const defaultDuckDBMemoryLimit = '256MB';

/**
 * The smallest memory limit accepted. Measured with a whole sync (load, models, snapshots) of the simulator: the
 * tiny site fails with DuckDB's out-of-memory error at 28MB and the small one (~1,000 applications) at 32MB; both
 * succeed at 48MB and 64MB. Below this a sync would fail in the middle (exit 1) instead of at validation (exit 2).
 */
export const minDuckDBMemoryLimit = '64MB';

const sizeUnits: Readonly<Record<string, number>> = {
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** A size as DuckDB reads it: a number and a unit. */
const sizePattern = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

/**
 * A Postgres schema grantflow accepts: a plain identifier (no quoting needed) of at most 63 characters, since
 * Postgres cuts longer names to 63 bytes and two long names could land in one schema.
 */
export const schemaNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A setting written as a URL (`scheme://...`) rather than a path. */
export const urlPattern = /^[a-z][a-z0-9+.-]*:\/\//i;

const postgresUrlPattern = /^postgres(ql)?:\/\//i;

/** A warehouse target naming Postgres (`postgres://`, `postgresql://`); anything else is a DuckDB file. */
export function isPostgresUrl(target: string): boolean {
  return postgresUrlPattern.test(target);
}

/**
 * The local file a warehouse target keeps its data in (a DuckDB file), or null for a database server's (Postgres, with
 * schemas). What the code outside the warehouse asks of a target: whether it is a file on this machine.
 */
export function warehouseFile(target: string): string | null {
  return isPostgresUrl(target) ? null : target;
}

/** URL parameters other clients (Prisma, JDBC, libpq wrappers) choose a schema with; pg ignores every one of them. */
const schemaParams = new Set(['schema', 'currentschema', 'search_path']);

function urlNamesSchema(url: string): boolean {
  if (!URL.canParse(url)) return false;
  return [...new URL(url).searchParams.keys()].some((key) => schemaParams.has(key.toLowerCase()));
}

/**
 * A search_path among the URL's server options (`?options=-c search_path=analytics`, `-csearch_path=`,
 * `--search-path=`; names in any case): Postgres would read this one, but grantflow sets its own search path after
 * it (postgres/pool.ts), so the schema it names would be silently ignored.
 */
function urlOptionsSetSearchPath(url: string): boolean {
  if (!URL.canParse(url)) return false;
  return new URL(url).searchParams.getAll('options').some(setsSearchPath);
}

/** Bytes of a size as DuckDB reads it (KB = 1000 bytes, KiB = 1024), or null when it is not a size. */
export function sizeBytes(text: string): number | null {
  const m = sizePattern.exec(text.trim());
  if (!m?.[1] || !m[2]) return null;
  return Number(m[1]) * (sizeUnits[m[2].toLowerCase()] ?? NaN);
}

/**
 * What leaves the warehouse of personal data (snapshots, the report): everything (`keep`), identifiers as keyed
 * tokens without free text (`pseudonymize`), or neither (`drop`). See docs/privacy.md.
 */
export const personalDataModes = ['keep', 'pseudonymize', 'drop'] as const;
export type PersonalDataMode = (typeof personalDataModes)[number];

/** Page size asked for unless set; a site may honour more (detectPageSize). */
export const defaultPerPage = 100;

/**
 * Every setting of a sync, as a pipeline file spells it (camelCase). Each one can also come from a flag
 * (`--kebab-case`) or an environment variable (`GRANTFLOW_SNAKE_CASE`); flags win over the environment,
 * which wins over the pipeline file, which wins over the defaults below.
 */
export const settingsSchema = z
  .object({
    site: z
      .string()
      .url('must be a URL such as https://yoursite.example.com')
      // grantflow adds /api/... itself: https://host/api would ask for /api/api/programs/ and end in a 401.
      .refine(
        (url) => !URL.canParse(url) || !/(^|\/)api(\/|$)/i.test(new URL(url).pathname),
        "must be the site's root URL such as https://yoursite.example.com, without /api (grantflow adds /api/... itself)",
      )
      .optional(),
    credentials: z.string().min(1).optional(),
    warehouse: z
      .string()
      .min(1)
      // A mistyped Postgres URL (postgress://, pg://) would otherwise become a DuckDB file under a folder named
      // after the scheme: a sync that looks fine and never reaches the intended database.
      .refine(
        (target) => !urlPattern.test(target) || postgresUrlPattern.test(target),
        'must be a DuckDB file path or a postgres:// (or postgresql://) URL; no other kind of URL names a warehouse',
      )
      // pg reads no schema from a URL: `?schema=analytics` would sync into the --schema setting (public) and exit 0.
      .refine(
        (target) => !postgresUrlPattern.test(target) || !urlNamesSchema(target),
        'must not name a schema in the URL (schema=, currentSchema=, search_path=): Postgres does not read it there, so the tables would land in the --schema setting (default public); use --schema, GRANTFLOW_SCHEMA or the pipeline key "schema"',
      )
      .refine(
        (target) => !postgresUrlPattern.test(target) || !urlOptionsSetSearchPath(target),
        `must not set search_path in the URL's options (options=-c search_path=...): ${searchPathIsOurs} (other options, such as -c statement_timeout=..., are kept)`,
      )
      .default('data/warehouse.duckdb'),
    schema: z
      .string()
      .regex(
        schemaNamePattern,
        'must be a plain SQL identifier: letters, digits and underscores, not starting with a digit, at most 63 characters',
      )
      .default('public'),
    duckdbMemoryLimit: z
      .string()
      .regex(sizePattern, 'must be a size such as 256MB or 2GB')
      .refine(
        (text) => (sizeBytes(text) ?? Infinity) >= (sizeBytes(minDuckDBMemoryLimit) ?? 0),
        `must be at least ${minDuckDBMemoryLimit}: DuckDB cannot load even a small site with less`,
      )
      .default(defaultDuckDBMemoryLimit),
    duckdbThreads: z.number().int('must be a whole number of threads').min(1, 'must be at least 1').max(256).optional(),
    snapshots: z
      .string()
      .min(1)
      .superRefine((target, ctx) => {
        const problem = snapshotTargetProblem(target);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      })
      .default('data/snapshots'),
    s3ForcePathStyle: z.boolean().default(false),
    rawDir: z.string().min(1).default('data/raw'),
    landRaw: z.boolean().default(true),
    keepRawRuns: z.number().int().min(1).default(5),
    // An empty list is refused, not read as "all": `--streams "$LIST"` with LIST unset must not sync everything.
    streams: z
      .array(z.string().min(1))
      .min(1, 'must name at least one stream; leave it out to sync every stream')
      .optional(),
    fullRefresh: z.boolean().default(false),
    fullRefreshAfterDays: z.number().positive().default(7),
    // How that refresh is spread: all parents in one run, or the longest-unread 1/N of them in each run.
    fullRefreshMode: z
      .enum(['all-at-once', 'rolling'], { message: 'must be "all-at-once" or "rolling"' })
      .default('all-at-once'),
    // A time budget: past it a sync starts no new work, commits what it fetched and ends `paused` (time-budget.ts).
    maxDuration: z
      .string()
      .refine(
        (text) => durationMs(text) !== null,
        'must be a duration such as 5h30m, 90m or 45s (units d, h, m, s, ms; larger than zero)',
      )
      .optional(),
    // Each stream's own time limit: past it the stream's walks stop, what was read is committed, the stream fails.
    maxStreamDuration: z
      .string()
      .refine(
        (text) => durationMs(text) !== null,
        'must be a duration such as 5h30m, 90m or 45s (units d, h, m, s, ms; larger than zero)',
      )
      .default('6h'),
    // Opt-in (it writes to the site): report jobs for these reports before they are read (extract/report-refresh.ts).
    refreshReports: z
      .array(
        z
          .string()
          .trim()
          .regex(/^(all|[1-9]\d{0,14})$/, 'must list report ids (whole numbers) or "all"'),
      )
      .default([]),
    refreshReportsTimeout: z.number().positive().default(600),
    siteMoved: z.boolean().default(false),
    rate: z.number().positive().max(1000).default(5),
    perPage: z.number().int().min(1).max(1000).default(defaultPerPage),
    // Find the largest page size the site honours, once per warehouse (extract/page-size.ts). Unset: on while perPage
    // is the default (a page size set by hand is what the operator wants read).
    detectPageSize: z.boolean().optional(),
    concurrency: z.number().int().min(1).max(64).default(8),
    siteTimeZone: z
      .string()
      .refine((tz) => {
        try {
          new Intl.DateTimeFormat('en-US', { timeZone: tz });
          return true;
        } catch {
          return false;
        }
      }, 'must be an IANA time zone such as UTC or Europe/Berlin')
      .default('UTC'),
    retainSnapshots: z.number().int().min(1).default(7),
    // What snapshots and the report carry of personal data (docs/privacy.md); the key comes from GRANTFLOW_PSEUDONYM_KEY.
    personalData: z.enum(personalDataModes, { message: 'must be "keep", "pseudonymize" or "drop"' }).default('keep'),
    // Rows soft-deleted longer than this are purged (pipeline/purge.ts); unset: never. `0s` purges every deleted row.
    purgeDeletedAfter: z
      .string()
      .refine(
        (text) => durationOrZeroMs(text) !== null,
        'must be a duration such as 90d, 12h or 0s (units d, h, m, s, ms)',
      )
      .optional(),
    models: z.boolean().default(true),
    // The user's own models (DIR/*.sql) and data tests (DIR/tests/*.sql), built and run with the built-in ones.
    modelsDir: z.string().min(1).optional(),
    snapshot: z.boolean().default(true),
    // Each row's source JSON in the snapshot files too: about half their bytes, so off unless asked for.
    snapshotRaw: z.boolean().default(false),
    report: z.string().min(1).optional(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    // Unmapped source paths made typed columns (normalize/promotions.ts); checked against the catalog by planPromotions.
    promote: z
      .array(
        z
          .object({
            stream: z.string().min(1),
            path: z.string().min(1),
            column: z.string().min(1),
            type: z.enum(promotionTypes),
            references: z.string().min(1).optional(),
          })
          .strict(),
      )
      .default([]),
  })
  .strict();

export type Settings = z.output<typeof settingsSchema>;
export type SettingsInput = z.input<typeof settingsSchema>;
export type SettingKey = keyof Settings;

/** The settings that say which warehouse to open and how: every command that opens one takes these. */
export const warehouseSettingKeys = [
  'warehouse',
  'schema',
  'duckdbMemoryLimit',
  'duckdbThreads',
] as const satisfies readonly SettingKey[];
export type WarehouseSettings = Pick<Settings, (typeof warehouseSettingKeys)[number]> & {
  /**
   * Not a setting: the schema of one site of a portfolio (config/portfolio.ts), on DuckDB and Postgres alike; it wins
   * over `schema`, which DuckDB otherwise ignores (its tables are in `main`).
   */
  readonly siteSchema?: string;
};

/**
 * Settings taken from a flag only, never from a GRANTFLOW_* variable or a pipeline file: `--site-moved` lifts the
 * one-site guard for the sync after a move, and kept in a file or an environment it would lift it for every run.
 */
export const flagOnlySettings: ReadonlySet<SettingKey> = new Set<SettingKey>(['siteMoved']);

/** How a setting is parsed from a flag or environment string. */
export const settingKinds: Readonly<Record<SettingKey, 'string' | 'number' | 'boolean' | 'list' | 'json'>> = {
  site: 'string',
  credentials: 'string',
  warehouse: 'string',
  schema: 'string',
  duckdbMemoryLimit: 'string',
  duckdbThreads: 'number',
  snapshots: 'string',
  s3ForcePathStyle: 'boolean',
  rawDir: 'string',
  landRaw: 'boolean',
  keepRawRuns: 'number',
  streams: 'list',
  fullRefresh: 'boolean',
  fullRefreshAfterDays: 'number',
  fullRefreshMode: 'string',
  maxDuration: 'string',
  maxStreamDuration: 'string',
  refreshReports: 'list',
  refreshReportsTimeout: 'number',
  siteMoved: 'boolean',
  rate: 'number',
  perPage: 'number',
  detectPageSize: 'boolean',
  concurrency: 'number',
  siteTimeZone: 'string',
  retainSnapshots: 'number',
  personalData: 'string',
  purgeDeletedAfter: 'string',
  models: 'boolean',
  modelsDir: 'string',
  snapshot: 'boolean',
  snapshotRaw: 'boolean',
  report: 'string',
  logLevel: 'string',
  promote: 'json',
};

export const envName = (key: string): string => `GRANTFLOW_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
export const flagName = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
