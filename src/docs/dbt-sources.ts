import { stringify } from 'yaml';

import { idOnlyTargets } from '../models/generic-tests.ts';
import { loadModels, modelTableDefs } from '../models/model-files.ts';
import { enumEntries } from '../warehouse/enum-label-sql.ts';
import { columnComment } from '../warehouse/catalog-comments.ts';
import { hasMetadata } from '../warehouse/ddl.ts';
import type { ColumnDef, TableDef } from '../normalize/table-def.ts';
import { tables as catalog } from '../streams/registry.ts';
import { dictionaryColumns, dictionarySections } from './data-dictionary.ts';

/** The dbt source names: the warehouse's tables, and the models grantflow builds in their own schema. */
export const dbtSource = 'grantflow';
export const dbtModelsSource = 'grantflow_analytics';

export interface DbtSourcesOptions {
  /** The warehouse's schema as dbt's default (`main` on DuckDB, `public` or `--schema` on Postgres). */
  readonly schema?: string;
  /** The models' schema as dbt's default (`analytics`, or `<schema>_analytics` beside another Postgres schema). */
  readonly analyticsSchema?: string;
}

type DbtTest = string | Record<string, Record<string, unknown>>;

const numericTypes = new Set(['integer', 'bigint']);

/** The rows a test of `t` looks at: live ones (not soft-deleted), as grantflow's own data tests do. */
const liveConfig = (t: TableDef): Record<string, unknown> => (hasMetadata(t) ? { where: '_deleted_at IS NULL' } : {});

/**
 * A column's tests, as grantflow's generated data tests (models/generic-tests.ts) check them: `not_null` on keys and
 * required columns, `unique` on a one-column key, `relationships` on a reference (a warning where the target is
 * known by id only), `accepted_values` on an enum (a warning: codes the spec does not list are kept).
 */
function columnTests(t: TableDef, c: ColumnDef, tables: ReadonlyMap<string, TableDef>, source: string): DbtTest[] {
  const tests: DbtTest[] = [];
  const key = t.primaryKey.includes(c.name);
  if (key && t.primaryKey.length === 1) tests.push('unique');
  if (key || c.notNull) tests.push('not_null');
  const ref = c.references;
  if (ref && tables.has(ref.table)) {
    const warn = idOnlyTargets.has(ref.table);
    const config = { ...liveConfig(t), ...(warn ? { severity: 'warn' } : {}) };
    tests.push({
      relationships: {
        to: `source('${source}', '${ref.table}')`,
        field: ref.column,
        ...(Object.keys(config).length > 0 ? { config } : {}),
      },
    });
  }
  if (c.enum !== undefined) {
    const numeric = numericTypes.has(c.type);
    const values = enumEntries(c.enum)
      .map(([code]) => code)
      .filter((code) => !numeric || /^-?\d+$/.test(code))
      .map((code) => (numeric ? Number(code) : code));
    if (values.length > 0)
      tests.push({
        accepted_values: {
          values,
          ...(numeric ? { quote: false } : {}),
          config: { ...liveConfig(t), severity: 'warn' },
        },
      });
  }
  return tests;
}

/** A key of several columns: dbt's `unique` over the columns joined, a table-level test. */
function tableTests(t: TableDef): DbtTest[] {
  if (t.primaryKey.length < 2) return [];
  const joined = t.primaryKey.map((c) => `CAST(${c} AS VARCHAR)`).join(" || '|' || ");
  return [{ unique: { column_name: `(${joined})` } }];
}

function sourceTable(t: TableDef, tables: ReadonlyMap<string, TableDef>, source: string): Record<string, unknown> {
  const tests = tableTests(t);
  return {
    name: t.name,
    description: t.description,
    ...(tests.length > 0 ? { data_tests: tests } : {}),
    columns: dictionaryColumns(t).map((c) => {
      const columnTestList = columnTests(t, c, tables, source);
      return {
        name: c.name,
        description: columnComment(c),
        ...(columnTestList.length > 0 ? { data_tests: columnTestList } : {}),
      };
    }),
  };
}

/**
 * A dbt `sources.yml` for the warehouse: every table (bookkeeping aside) and model with every column and its
 * description (the catalog's comments), and tests on keys, references and enums, so a dbt project can build on
 * the warehouse as it is. Schemas are dbt variables (`grantflow_schema`, `grantflow_analytics_schema`) with the
 * given defaults. Deterministic, from the same declarations as docs/data-dictionary.md.
 */
export function renderDbtSources(
  options: DbtSourcesOptions = {},
  tables: readonly TableDef[] = catalog,
  models: readonly TableDef[] = modelTableDefs(loadModels()),
): string {
  const { core } = dictionarySections(tables, models);
  const byName = new Map(core.map((t) => [t.name, t]));
  const modelsByName = new Map(models.map((m) => [m.name, m]));
  const schema = options.schema ?? 'main';
  const analytics = options.analyticsSchema ?? 'analytics';
  const document = {
    version: 2,
    sources: [
      {
        name: dbtSource,
        description:
          'Tables grantflow loads from the grant management site. Rows with _deleted_at set were soft-deleted; ' +
          'beside each such table, a view <table>_current holds its live rows, with a label beside each enum code.',
        schema: `{{ var('grantflow_schema', '${schema}') }}`,
        tables: core.map((t) => sourceTable(t, byName, dbtSource)),
      },
      {
        name: dbtModelsSource,
        description: 'Models grantflow builds after every sync (models/*.sql), rebuilt in full each time.',
        schema: `{{ var('grantflow_analytics_schema', '${analytics}') }}`,
        tables: models.map((m) => sourceTable(m, modelsByName, dbtModelsSource)),
      },
    ],
  };
  const header =
    '# Generated by `grantflow docs dbt` from the stream definitions and model headers. Do not edit by hand.\n';
  return header + stringify(document, { lineWidth: 0 });
}
