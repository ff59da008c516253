import { portfolioSchema, siteSchema, type PortfolioSite } from '../config/portfolio.ts';

import type { CatalogObject, StoredComments, Warehouse } from '../warehouse/types.ts';
import { commentKey, commentStatements } from '../warehouse/catalog-comments.ts';

import { ident, literal } from '../warehouse/values.ts';

import { analyticsSchemaFor } from '../warehouse/index.ts';
import { tables as catalog } from '../streams/registry.ts';

/** The comment of the `site` column every portfolio view starts with. */
const siteComment = 'Name of the site the row comes from, as the pipeline file names it.';

/**
 * Totals across a portfolio's sites, where one means something: per site, since ids (programs, funds) are each
 * site's own and never match across sites. Built on the union views of the models they read, when those exist,
 * named unqualified: a view resolves them in its own schema, and `portfolio.award_rates` would be ambiguous to a
 * reader whose DuckDB catalog is the file `portfolio.duckdb`.
 */
const portfolioModels: readonly {
  readonly name: string;
  readonly reads: string;
  readonly sql: string;
  /** Its comment, and its columns' (`COMMENT ON`), as a model header gives them. */
  readonly description: string;
  readonly columns: Readonly<Record<string, string>>;
}[] = [
  {
    name: 'award_rates_by_site',
    reads: 'award_rates',
    description: 'Award rates per site of the portfolio: the sums of award_rates over its programs.',
    columns: {
      site: siteComment,
      programs: 'Programs of the site (rows of award_rates).',
      applications: 'Applications of those programs, not trashed and not deleted.',
      awarded: 'Awards with decision 0 (Awarded) among those applications.',
      declined: 'Awards with decision 1 (Declined) among those applications.',
      award_rate: 'awarded / (awarded + declined), a fraction from 0 to 1 (6 decimals); NULL when both are 0.',
      awarded_value: "Sum of the programs' awarded values; NULL when one of them is unknown.",
    },
    // A site's awarded value is NULL when one of its programs' is (unknown, not zero), as award_rates says it.
    sql: `SELECT site,
  count(*) AS programs,
  sum(applications) AS applications,
  sum(awarded) AS awarded,
  sum(declined) AS declined,
  CAST(CASE WHEN sum(awarded) + sum(declined) > 0
    THEN CAST(sum(awarded) AS DECIMAL(18,6)) / (sum(awarded) + sum(declined)) END AS DECIMAL(9,6)) AS award_rate,
  CASE WHEN count(awarded_value) = count(*) THEN sum(awarded_value) END AS awarded_value
FROM award_rates
GROUP BY site`,
  },
  {
    name: 'funding_flow_by_site',
    reads: 'funding_flow',
    description: 'Funding flow per site of the portfolio: the sums of funding_flow over its fund and program pairs.',
    columns: {
      site: siteComment,
      fund_programs: 'Fund and program pairs of the site (rows of funding_flow).',
      transfers: 'Transfers from the funds to the programs.',
      transferred: 'Amount transferred; NULL when one of the amounts is unknown.',
      budget: 'Sum of the programs budgets as funding_flow gives them.',
      paid: 'Sum of the payments as funding_flow gives them.',
      balance: 'Sum of the balances as funding_flow gives them.',
      unreconciled: 'Pairs whose amounts do not reconcile (funding_flow.reconciled false).',
    },
    sql: `SELECT site,
  count(*) AS fund_programs,
  sum(transfers) AS transfers,
  CASE WHEN count(transferred) = count(*) THEN sum(transferred) END AS transferred,
  sum(budget) AS budget,
  sum(paid) AS paid,
  sum(balance) AS balance,
  count(*) FILTER (WHERE NOT reconciled) AS unreconciled
FROM funding_flow
GROUP BY site`,
  },
];

/**
 * Rebuilds the `portfolio` schema's views: for every table and model of the sites' schemas (bookkeeping aside), one
 * view that unions the sites having it, with a `site` column first (the site's name), then the per-site totals
 * (portfolioModels). Views of a site no longer listed, or of a table no site has, are dropped: all in one
 * transaction, so readers see the old views or the new ones. `warehouse` is opened on the portfolio schema and holds
 * its run lock. Returns the views, by name, with the keys their rows are ordered by.
 */
export interface PortfolioViews {
  readonly views: readonly string[];
  /** Per view of a catalog table: `site` and the table's primary key, which order its rows uniquely. */
  readonly keys: Readonly<Record<string, readonly string[]>>;
}

export async function rebuildPortfolioViews(
  warehouse: Warehouse,
  sites: readonly PortfolioSite[],
): Promise<PortfolioViews> {
  const tables = await siteTables(warehouse, sites);
  const statements: string[] = [];
  for (const name of await existingViews(warehouse)) {
    statements.push(`DROP VIEW IF EXISTS ${ident(portfolioSchema)}.${ident(name)}`);
  }
  const views: string[] = [];
  const keys: Record<string, readonly string[]> = {};
  const primaryKeys = new Map(catalog.map((t) => [t.name, t.primaryKey]));
  for (const [table, bySite] of tables) {
    const columns = sharedColumns([...bySite.values()].map((t) => t.columns));
    const selects = [...bySite].map(
      ([site, { schema }]) =>
        `SELECT ${literal(site)} AS site, ${columns.map(ident).join(', ')} FROM ${ident(schema)}.${ident(table)}`,
    );
    statements.push(`CREATE VIEW ${ident(portfolioSchema)}.${ident(table)} AS ${selects.join('\nUNION ALL ')}`);
    views.push(table);
    const key = primaryKeys.get(table);
    if (key && key.every((c) => columns.includes(c))) keys[table] = ['site', ...key];
  }
  for (const model of portfolioModels) {
    if (!tables.has(model.reads)) continue;
    statements.push(`CREATE VIEW ${ident(portfolioSchema)}.${ident(model.name)} AS ${model.sql}`);
    views.push(model.name);
  }
  statements.push(...(await viewComments(warehouse, tables, views)));
  await warehouse.execInTransaction(statements, portfolioSchema, 'portfolio views');
  return { views: views.sort(), keys };
}

/**
 * The views' comments, made in the same transaction: a union view says what the site's table says (its first site's
 * comments, so whatever describes a site's tables and models, declarations or model headers, describes these too),
 * after the `site` column; the totals say what portfolioModels gives them.
 */
async function viewComments(
  warehouse: Warehouse,
  tables: Map<string, Map<string, SiteTable>>,
  views: readonly string[],
): Promise<string[]> {
  const bySchema = new Map<string, StoredComments>();
  const objects: CatalogObject[] = [];
  for (const [table, bySite] of tables) {
    const [first] = bySite.values();
    if (first === undefined) continue;
    const stored = bySchema.get(first.schema) ?? (await warehouse.comments(first.schema));
    bySchema.set(first.schema, stored);
    const own = stored.get(commentKey(table)) ?? '';
    objects.push({
      name: table,
      kind: 'view',
      comment: `Every site's rows of ${table}, a site column first. ${own}`.trim(),
      columns: [
        { name: 'site', comment: siteComment },
        ...sharedColumns([...bySite.values()].map((t) => t.columns)).map((c) => ({
          name: c,
          comment: stored.get(commentKey(table, c)) ?? '',
        })),
      ],
    });
  }
  for (const model of portfolioModels) {
    if (!views.includes(model.name)) continue;
    objects.push({
      name: model.name,
      kind: 'view',
      comment: model.description,
      columns: Object.entries(model.columns).map(([name, comment]) => ({ name, comment })),
    });
  }
  return commentStatements(objects, null, (name) => `${ident(portfolioSchema)}.${ident(name)}`);
}

/** A site's table or model: the schema it is in and its columns, in their order. */
interface SiteTable {
  readonly schema: string;
  readonly columns: string[];
}

/**
 * Each site's tables (bookkeeping aside) and models (in the site's analytics schema), by name: table -> site name ->
 * where and which columns. Base tables only: the `_current` views of a site are views of its tables, which the
 * union views already carry with `_deleted_at`.
 */
async function siteTables(
  warehouse: Warehouse,
  sites: readonly PortfolioSite[],
): Promise<Map<string, Map<string, SiteTable>>> {
  const { defaultSchema } = warehouse.sqlDialect;
  const bySchema = new Map<string, string>();
  for (const s of sites) {
    bySchema.set(siteSchema(s.name), s.name);
    bySchema.set(analyticsSchemaFor(siteSchema(s.name), defaultSchema), s.name);
  }
  const rows = await warehouse.query(
    `SELECT c.table_schema, c.table_name, c.column_name FROM information_schema.columns c
       JOIN information_schema.tables t
         ON t.table_catalog = c.table_catalog AND t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_catalog = current_database() AND t.table_type = 'BASE TABLE'
        AND c.table_schema IN (${[...bySchema.keys()].map(literal).join(', ')})
      ORDER BY c.table_schema, c.table_name, c.ordinal_position`,
  );
  const tables = new Map<string, Map<string, SiteTable>>();
  for (const r of rows) {
    const table = String(r.table_name);
    const schema = String(r.table_schema);
    const site = bySchema.get(schema);
    // Bookkeeping is each site's own business; `_gf_next_*` is a model being rebuilt (postgres/replace-table.ts).
    if (site === undefined || table.startsWith('_grantflow_') || table.startsWith('_gf_')) continue;
    const ofTable = tables.get(table) ?? new Map<string, SiteTable>();
    tables.set(table, ofTable);
    const found = ofTable.get(site) ?? { schema, columns: [] };
    ofTable.set(site, found);
    found.columns.push(String(r.column_name));
  }
  // Sites in the pipeline file's order, so a view reads the way the file does.
  const order = sites.map((s) => s.name);
  for (const [table, ofTable] of tables)
    tables.set(table, new Map(order.flatMap((s) => (ofTable.has(s) ? [[s, ofTable.get(s)!] as const] : []))));
  return new Map([...tables].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The columns every site's table has, in the first one's order: sites synced by different grantflow versions may
 * differ by a column an upgrade added, until each has synced again.
 */
function sharedColumns(perSite: readonly string[][]): string[] {
  const [first = [], ...rest] = perSite;
  return first.filter((c) => rest.every((cols) => cols.includes(c)));
}

async function existingViews(warehouse: Warehouse): Promise<string[]> {
  const rows = await warehouse.query(
    `SELECT table_name FROM information_schema.views WHERE table_catalog = current_database() AND table_schema = $1`,
    [portfolioSchema],
  );
  const names = rows.map((r) => String(r.table_name));
  // The totals read the union views: dropped first (Postgres refuses to drop a view another depends on).
  const derived = new Set(portfolioModels.map((m) => m.name));
  return [...names.filter((n) => derived.has(n)), ...names.filter((n) => !derived.has(n))];
}
