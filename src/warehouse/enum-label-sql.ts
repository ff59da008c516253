import { enums, type EnumName } from '../normalize/enums.ts';
import type { ColumnDef } from '../normalize/table-def.ts';
import type { SqlDialect } from './types.ts';
import { ident, literal } from './values.ts';

/** The column beside an enum code column that holds its label: `state` -> `state_label`. */
export function labelColumnName(column: string): string {
  return `${column}_label`;
}

/** The enum's codes and labels as the spec lists them (normalize/enums.ts), or none for an enum it does not know. */
export function enumEntries(name: string): [string, string][] {
  return name in enums ? Object.entries(enums[name as EnumName]) : [];
}

const numericTypes = new Set(['integer', 'bigint']);

/**
 * The label of enum column `c` as a SQL expression: the spec's label of its code, the code as text when the spec has
 * none (a code newer than the spec stays readable, never NULL), NULL only when the code is. Labels are spelt out in
 * the view rather than joined from `enum_labels`, so a view reads right before the first sync filled that table,
 * and costs no join per enum column.
 */
export function enumLabelSql(dialect: SqlDialect, c: ColumnDef, column: string = ident(c.name)): string {
  const numeric = numericTypes.has(c.type);
  const asText = numeric || c.type !== 'text' ? `CAST(${column} AS ${dialect.sqlType('text')})` : column;
  // A code a numeric column cannot hold (a text code on an integer column) can never match: left out.
  const whens = enumEntries(c.enum ?? '')
    .filter(([code]) => !numeric || /^-?\d+$/.test(code))
    .map(([code, label]) => `WHEN ${numeric ? code : literal(code)} THEN ${literal(label)}`);
  return whens.length === 0 ? asText : `CASE ${column} ${whens.join(' ')} ELSE ${asText} END`;
}
