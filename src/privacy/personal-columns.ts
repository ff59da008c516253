import type { PersonalDataMode } from '../config/settings.ts';
import { loadAllModels, modelTableDefs } from '../models/model-files.ts';
import { metadataColumns, type ColumnDef, type PersonalData, type TableDef } from '../normalize/table-def.ts';
import { tables as builtinTables } from '../streams/registry.ts';
import type { SelectedColumn } from '../warehouse/types.ts';
import { ident } from '../warehouse/values.ts';

/** Where the tokens are: the warehouse's `_grantflow_pseudonyms` (sql/006_pseudonyms.sql). */
export const pseudonymTable = '_grantflow_pseudonyms';

/** What a column holds of personal data: its declared kind, null for none, `undeclared` for a column no one declared. */
export type ColumnKind = PersonalData | null | 'undeclared';

/** How a column leaves the warehouse under a mode: as it is, as its token, or not at all. */
export type ColumnOutput = 'as_is' | 'token' | 'omit';

/**
 * The one rule of docs/privacy.md: `keep` writes everything; `pseudonymize` writes identifiers as tokens and leaves
 * free text out; `drop` leaves both out. A column no declaration names (a field found by drift, a column a model does
 * not declare) counts as free text.
 */
export function columnOutput(kind: ColumnKind, mode: PersonalDataMode): ColumnOutput {
  if (mode === 'keep' || kind === null) return 'as_is';
  if (mode === 'pseudonymize' && kind === 'identifier') return 'token';
  return 'omit';
}

const withMetadata = (t: TableDef): readonly ColumnDef[] =>
  t.kind === 'entity' || t.kind === 'dimension' || t.kind === 'bridge'
    ? [...t.columns, ...metadataColumns.filter((m) => !t.columns.some((c) => c.name === m.name))]
    : t.columns;

/** The declared columns of every table a snapshot or a view may show: the catalog's (with metadata) and the models'. */
export class PersonalColumns {
  private readonly byTable = new Map<string, ReadonlyMap<string, ColumnDef>>();
  private readonly kinds = new Map<string, TableDef['kind']>();

  constructor(
    tables: readonly TableDef[],
    private readonly siteColumn = false,
  ) {
    for (const t of tables) {
      this.byTable.set(t.name, new Map(withMetadata(t).map((c) => [c.name, c])));
      this.kinds.set(t.name, t.kind);
    }
  }

  /** Whether `table` is a core table of the catalog (entity, dimension or bridge): not a model, not bookkeeping. */
  isCore(table: string): boolean {
    const kind = this.kinds.get(table);
    return kind === 'entity' || kind === 'dimension' || kind === 'bridge';
  }

  /** The built-in catalog and every model, the user's of `modelsDir` too. */
  static of(catalog: readonly TableDef[] = builtinTables, modelsDir?: string): PersonalColumns {
    return new PersonalColumns([...catalog, ...modelTableDefs(loadAllModels(modelsDir))]);
  }

  /** As `of`, for a portfolio's views: a `site` column first holds no personal data. */
  static ofPortfolio(modelsDir?: string): PersonalColumns {
    return new PersonalColumns([...builtinTables, ...modelTableDefs(loadAllModels(modelsDir))], true);
  }

  /** The declaration of `table.column`, or undefined when none names it. */
  column(table: string, column: string): ColumnDef | undefined {
    return this.byTable.get(table)?.get(column);
  }

  kind(table: string, column: string): ColumnKind {
    // The site's name, first column of a portfolio's views (pipeline/portfolio-views.ts).
    if (this.siteColumn && column === 'site') return null;
    const c = this.column(table, column);
    return c === undefined ? 'undeclared' : (c.personal ?? null);
  }

  /** Identifier columns of `table` among `present`, each with whether it holds numbers (user ids). */
  identifiers(table: string, present: readonly string[]): { name: string; numeric: boolean }[] {
    return present
      .map((name) => this.column(table, name))
      .filter((c): c is ColumnDef => c?.personal === 'identifier')
      .map((c) => ({ name: c.name, numeric: isNumeric(c) }));
  }
}

const isNumeric = (c: ColumnDef): boolean => c.type === 'bigint' || c.type === 'integer';

/** SQL of the token of `t.<column>`: NULL for a NULL value, or for one no refresh has given a token yet. */
export function tokenSql(column: string, numeric: boolean, tokens: string): string {
  const value = numeric ? `'user:' || CAST(t.${ident(column)} AS TEXT)` : `'text:' || t.${ident(column)}`;
  return `(SELECT p.token FROM ${tokens} p WHERE p.value = ${value})`;
}

/** SQL of every value a refresh gives a token: `value` of each identifier of `table` (qualified), distinct. */
export function identifierValuesSql(
  qualified: string,
  identifiers: readonly { name: string; numeric: boolean }[],
): string[] {
  return identifiers.map(({ name, numeric }) => {
    const value = numeric ? `'user:' || CAST(t.${ident(name)} AS TEXT)` : `'text:' || t.${ident(name)}`;
    return `SELECT DISTINCT ${value} AS value FROM ${qualified} t WHERE t.${ident(name)} IS NOT NULL`;
  });
}

/**
 * The columns of `table` (those `present`, in order) as they leave the warehouse under `mode`; `tokens` is the
 * qualified token table. Under `keep`, every column as it is.
 */
export function selectedColumns(
  personal: PersonalColumns,
  table: string,
  present: readonly string[],
  mode: PersonalDataMode,
  tokens: string,
): SelectedColumn[] {
  const out: SelectedColumn[] = [];
  for (const name of present) {
    const output = columnOutput(personal.kind(table, name), mode);
    if (output === 'omit') continue;
    if (output === 'as_is') out.push({ name, sql: `t.${ident(name)}`, token: false });
    else {
      const def = personal.column(table, name);
      out.push({ name, sql: tokenSql(name, def !== undefined && isNumeric(def), tokens), token: true });
    }
  }
  return out;
}
