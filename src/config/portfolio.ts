import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../util/errors.ts';
import { commaList } from '../util/comma-list.ts';
import { settingSource } from './load-settings.ts';
import type { Settings } from './settings.ts';

/**
 * A portfolio: several sites synced into one warehouse, each into a schema of its own (`site_<name>`), with a
 * `portfolio` schema of views over them all (pipeline/portfolio.ts). Listed under `sites` in a pipeline file.
 */
export interface PortfolioSite {
  /** Lower-case letters, digits and underscores: it names the schema, the snapshot folder and the variables. */
  readonly name: string;
  readonly site: string;
  /** A credentials file (absolute); without one the site reads GRANTFLOW_<NAME>_CLIENT_ID and the other three. */
  readonly credentials?: string;
}

/** The schema a portfolio's views live in. */
export const portfolioSchema = 'portfolio';

/**
 * The one place a site's schema is named (other features that place tables per site, such as the models' own
 * schema, derive theirs from it): `site_<name>`, on DuckDB and Postgres alike.
 */
export function siteSchema(name: string): string {
  return `site_${name}`;
}

/** The credential variables of a site without a credentials file: GRANTFLOW_NORTH_CLIENT_ID for site `north`. */
export function siteCredentialVariable(name: string, key: string): string {
  return `GRANTFLOW_${name.toUpperCase()}_${key.toUpperCase()}`;
}

// 63 (Postgres's limit) minus `site_`; lower case, so the schema needs no quoting and the variables are unambiguous.
const namePattern = /^[a-z][a-z0-9_]{0,57}$/;

const siteSchemaDef = z
  .object({
    name: z
      .string()
      .regex(namePattern, 'must be lower-case letters, digits and underscores, starting with a letter (at most 58)'),
    site: z
      .string()
      .regex(/^https?:\/\/[^/\s]+/i, 'must be an http(s) URL such as https://yoursite.example.com')
      .transform((s) => s.replace(/\/+$/, '')),
    credentials: z.string().min(1).optional(),
  })
  .strict();

const sitesSchema = z
  .array(siteSchemaDef)
  .min(1, 'must list at least one site')
  .superRefine((sites, ctx) => {
    const seen = new Set<string>();
    for (const s of sites) {
      if (seen.has(s.name)) ctx.addIssue({ code: 'custom', message: `names site "${s.name}" twice` });
      // Its snapshot folder would be the portfolio views' (pipeline/portfolio.ts).
      if (s.name === portfolioSchema)
        ctx.addIssue({ code: 'custom', message: `names a site "${portfolioSchema}": that name is the views'` });
      seen.add(s.name);
    }
  });

/**
 * The sites a pipeline file lists, or null when it lists none (a one-site pipeline). Credentials paths are resolved
 * against the file's folder, as its settings' paths are. The pipeline file itself was read (and any problem with it
 * said) by loadSettings first.
 */
export async function readPortfolioSites(pipeline: string | undefined): Promise<PortfolioSite[] | null> {
  if (!pipeline) return null;
  const path = resolve(pipeline);
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(`pipeline file ${path} cannot be read: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || !('sites' in value)) return null;
  const parsed = sitesSchema.safeParse((value as { sites: unknown }).sites);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = `sites${(issue?.path ?? []).map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}`;
    throw new ConfigError(`"${where}" in pipeline file ${path}: ${issue?.message ?? 'is not valid'}`);
  }
  const folder = dirname(path);
  return parsed.data.map((s) => ({
    name: s.name,
    site: s.site,
    ...(s.credentials
      ? { credentials: isAbsolute(s.credentials) ? s.credentials : resolve(folder, s.credentials) }
      : {}),
  }));
}

/**
 * The portfolio's sites a run covers: all, or those `--sites a,b` names (an unknown name is a ConfigError). The
 * settings that name one site (site, credentials, schema) are refused next to a portfolio: each site has its own.
 */
export function selectPortfolioSites(
  sites: readonly PortfolioSite[],
  only: string | undefined,
  settings: Partial<Settings>,
): PortfolioSite[] {
  for (const key of ['site', 'credentials', 'schema'] as const) {
    const source = settingSource(settings, key);
    if (source === undefined) continue;
    const where =
      source === 'flag' ? `--${key}` : source === 'environment' ? `GRANTFLOW_${key.toUpperCase()}` : `"${key}"`;
    throw new ConfigError(
      `${where} (${source}) cannot be used with a pipeline file listing "sites": each site has its own ` +
        (key === 'schema' ? `schema (site_<name>)` : `${key} in its entry`),
    );
  }
  if (only === undefined) return [...sites];
  const names = commaList(only);
  if (names.length === 0) throw new ConfigError('--sites must name at least one site of the pipeline file');
  const unknown = names.filter((n) => !sites.some((s) => s.name === n));
  if (unknown.length > 0)
    throw new ConfigError(
      `--sites names ${unknown.map((n) => `"${n}"`).join(', ')}, not in the pipeline file; its sites: ${sites.map((s) => s.name).join(', ')}`,
    );
  return sites.filter((s) => names.includes(s.name));
}
