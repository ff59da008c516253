import type { TableDef } from '../normalize/table-def.ts';
import { enums, type EnumName } from '../normalize/enums.ts';

export type Severity = 'error' | 'warn';

/** A data test: a query returning the failing rows (none = pass). */
export interface DataTestDef {
  readonly name: string;
  readonly description: string;
  readonly severity: Severity;
  readonly sql: string;
}

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const literal = (value: string): string => `'${value.replace(/'/g, "''")}'`;

/**
 * Tables that references point at by id only (ApplicationRef, DecisionRef, payment and budget ids): the normaliser
 * builds no row from such a reference, and the site keeps awards, payments and activity of an application deleted
 * before grantflow ever saw it, so a dangling id there is a warning. References into tables every reference
 * fills (users, programs, stages, funds, ...) must always resolve: an error.
 */
export const idOnlyTargets: ReadonlySet<string> = new Set(['applications', 'awards', 'payments', 'budgets']);

const hasMetadata = (t: TableDef): boolean => t.kind === 'entity' || t.kind === 'dimension' || t.kind === 'bridge';
const live = (t: TableDef, alias = ''): string => (hasMetadata(t) ? ` AND ${alias}_deleted_at IS NULL` : '');

/** A ratio's name: every ratio is a fraction from 0 to 1 named `*_rate` or `*_share`, in tables and models alike. */
export const isRatio = (column: string): boolean => /_(rate|share)$/.test(column);

/**
 * Tests generated from the catalog (the single source of the schema): unique and non-null primary keys,
 * non-null required columns, references that resolve, enum values the API documents, `_raw` present, ratios that are
 * fractions.
 * References and enums only look at live rows (not soft-deleted).
 */
export function genericTests(tables: readonly TableDef[]): DataTestDef[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const tests: DataTestDef[] = [];
  for (const t of tables) {
    if (t.kind === 'model' || t.kind === 'bookkeeping') continue;
    const table = ident(t.name);
    if (t.primaryKey.length > 0) {
      const key = t.primaryKey.map(ident).join(', ');
      tests.push({
        name: `unique:${t.name}(${t.primaryKey.join(',')})`,
        description: `The primary key of ${t.name} is unique.`,
        severity: 'error',
        sql: `SELECT ${key}, count(*) AS copies FROM ${table} GROUP BY ${key} HAVING count(*) > 1`,
      });
    }
    const required = t.columns.filter((c) => c.notNull || t.primaryKey.includes(c.name));
    for (const c of required) {
      tests.push({
        name: `not_null:${t.name}.${c.name}`,
        description: `${t.name}.${c.name} is never NULL.`,
        severity: 'error',
        sql: `SELECT * FROM ${table} WHERE ${ident(c.name)} IS NULL`,
      });
    }
    if (hasMetadata(t)) {
      tests.push({
        name: `raw_present:${t.name}`,
        description: `Every ${t.name} row keeps its source JSON in _raw.`,
        severity: 'error',
        sql: `SELECT * FROM ${table} WHERE _raw IS NULL`,
      });
    }
    for (const c of t.columns) {
      const ref = c.references;
      if (ref && byName.has(ref.table)) {
        const col = ident(c.name);
        tests.push({
          name: `relationship:${t.name}.${c.name}->${ref.table}.${ref.column}`,
          description: `Every non-NULL ${t.name}.${c.name} resolves to a row of ${ref.table}.`,
          severity: idOnlyTargets.has(ref.table) ? 'warn' : 'error',
          sql:
            `SELECT c.${col} AS missing_id, count(*) AS rows_affected FROM ${table} c ` +
            `WHERE c.${col} IS NOT NULL${live(t, 'c.')} ` +
            `AND NOT EXISTS (SELECT 1 FROM ${ident(ref.table)} r WHERE r.${ident(ref.column)} = c.${col}) ` +
            `GROUP BY c.${col}`,
        });
      }
      if (isRatio(c.name)) {
        tests.push({
          name: `fraction:${t.name}.${c.name}`,
          description: `${t.name}.${c.name} is a fraction from 0 to 1, as every ratio grantflow stores (one out of it is a site's value read in another unit, so this warns).`,
          severity: 'warn',
          sql: `SELECT * FROM ${table} WHERE (${ident(c.name)} < 0 OR ${ident(c.name)} > 1)${live(t)}`,
        });
      }
      if (c.enum && c.enum in enums) {
        const values = Object.keys(enums[c.enum as EnumName])
          .map(literal)
          .join(', ');
        tests.push({
          name: `accepted_values:${t.name}.${c.name}`,
          description: `${t.name}.${c.name} holds only values of enum ${c.enum} the API documents (unknown values are kept, so this warns).`,
          severity: 'warn',
          sql:
            `SELECT ${ident(c.name)} AS value, count(*) AS rows_affected FROM ${table} ` +
            `WHERE ${ident(c.name)} IS NOT NULL${live(t)} AND CAST(${ident(c.name)} AS TEXT) NOT IN (${values}) ` +
            `GROUP BY ${ident(c.name)}`,
        });
      }
    }
  }
  return tests;
}
