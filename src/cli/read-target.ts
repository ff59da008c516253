import type { Command } from 'commander';
import { settingSource } from '../config/load-settings.ts';
import { portfolioSchema, readPortfolioSites, siteSchema } from '../config/portfolio.ts';
import {
  warehouseFile,
  warehouseSettingKeys,
  type SettingKey,
  type Settings,
  type WarehouseSettings,
} from '../config/settings.ts';
import { ConfigError } from '../util/errors.ts';
import type { Warehouse } from '../warehouse/types.ts';
import { settingsFrom } from './settings-options.ts';

/** `--site NAME`: a portfolio's site, by the name its pipeline file gives it. */
export function addSiteOption(command: Command): Command {
  return command.option(
    '--site <name>',
    'with --pipeline naming a portfolio (a file listing "sites"): the site to read, in its schema site_<name>',
  );
}

/**
 * The settings of a command that only reads (status, report, query), with the schema it reads: one site's warehouse
 * as usual, or one site of a portfolio, picked by `--pipeline FILE --site NAME` or by `--schema site_<name>`, on
 * DuckDB and Postgres alike. A portfolio's pipeline file with no site picked reads the views (`unpicked: 'views'`,
 * query) or is a ConfigError naming the sites (status, report).
 */
export async function readTarget<K extends SettingKey>(
  options: Record<string, unknown>,
  keys: readonly K[],
  unpicked: 'views' | 'refuse',
  flags?: Partial<Record<SettingKey, unknown>>,
): Promise<Pick<Settings, K | (typeof warehouseSettingKeys)[number]> & WarehouseSettings> {
  const settings = await settingsFrom(options, [...keys, ...warehouseSettingKeys], flags, true, true);
  const pipeline = (options.pipeline as string | undefined) ?? process.env.GRANTFLOW_PIPELINE;
  const sites = await readPortfolioSites(pipeline);
  const name = options.site as string | undefined;
  const schemaGiven = settingSource(settings, 'schema') !== undefined;
  if (name !== undefined) {
    if (sites === null)
      throw new ConfigError(
        `--site names a site of a portfolio: give --pipeline FILE with the file listing "sites" (or read its schema with --schema site_<name>)`,
      );
    if (schemaGiven) throw new ConfigError('--site and --schema both choose the schema to read: give one of them');
    if (!sites.some((s) => s.name === name))
      throw new ConfigError(
        `--site "${name}" is not a site of the pipeline file; its sites: ${sites.map((s) => s.name).join(', ')}`,
      );
    return { ...settings, siteSchema: siteSchema(name) };
  }
  // A DuckDB file keeps one site's tables in `main`: a schema given names one of a portfolio's (or its views').
  if (schemaGiven && warehouseFile(settings.warehouse) !== null) return { ...settings, siteSchema: settings.schema };
  if (schemaGiven || sites === null) return settings;
  if (unpicked === 'views') return { ...settings, siteSchema: portfolioSchema };
  throw pickASite(sites, `pipeline file ${String(pipeline)}`);
}

/** One line for a portfolio read without a site picked: its sites and how to pick one (`status`, `report`). */
export function pickASite(sites: readonly { readonly name: string }[], where: string): ConfigError {
  const names = sites.map((s) => s.name).join(', ');
  return new ConfigError(
    `${where} is a portfolio of ${sites.length} site${sites.length === 1 ? '' : 's'} (${names}): pick one with ` +
      `--site NAME (with --pipeline FILE) or --schema site_<name>; the views over all of them are in schema portfolio`,
  );
}

/** The sites of a portfolio the warehouse holds: each schema `site_<name>` with a runs table, by name. */
export async function portfolioSitesIn(warehouse: Warehouse): Promise<{ name: string }[]> {
  const rows = await warehouse.query(
    `SELECT DISTINCT table_schema FROM information_schema.tables
      WHERE table_catalog = current_database() AND table_name = '_grantflow_runs' ORDER BY table_schema`,
  );
  const prefix = siteSchema('');
  return rows
    .map((r) => String(r.table_schema))
    .filter((schema) => schema.startsWith(prefix))
    .map((schema) => ({ name: schema.slice(prefix.length) }));
}
