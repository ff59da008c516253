import type { ColumnDef, TableDef } from '../normalize/table-def.ts';
import { allColumns, currentViewColumns, currentViewName } from './ddl.ts';
import { enumEntries } from './enum-label-sql.ts';
import type { SqlRunner } from './sql-runner.ts';
import type { CatalogObject, SqlDialect, StoredComments } from './types.ts';
import { ident, literal } from './values.ts';

/**
 * A column's comment: its description, then where it points and what its codes mean, which the dictionary shows in
 * columns of their own and a BI tool has nowhere else to show.
 */
export function columnComment(c: ColumnDef): string {
  const parts = [c.description.trim()];
  if (c.references) parts.push(`References ${c.references.table}.${c.references.column}.`);
  if (c.enum !== undefined) {
    const codes = enumEntries(c.enum).map(([code, label]) => (code === label ? code : `${code} ${label}`));
    // A description that lists the codes itself is not repeated.
    if (!codes.every((code) => c.description.includes(code)) || codes.length === 0)
      parts.push(`Enum ${c.enum}${codes.length > 0 ? `: ${codes.join(', ')}` : ''}.`);
  }
  return parts.filter((p) => p !== '').join(' ');
}

/** The comment of a `_current` view: what it leaves out, then what its table holds. */
export function currentViewComment(table: TableDef): string {
  return `Rows of ${table.name} not soft-deleted (_deleted_at IS NULL), a label beside each enum code. ${table.description}`.trim();
}

/** The comment of a label column of a `_current` view. */
export function labelComment(c: ColumnDef): string {
  return `Label of ${c.name} (enum ${c.enum ?? ''}) as the API documents it; the code as text when it has none.`;
}

/** A table of the catalog as its comments: the table, and its `_current` view where it has one. */
export function catalogObjects(table: TableDef): CatalogObject[] {
  const objects: CatalogObject[] = [
    {
      name: table.name,
      kind: 'table',
      comment: table.description,
      columns: allColumns(table).map((c) => ({ name: c.name, comment: columnComment(c) })),
    },
  ];
  const view = currentViewName(table);
  if (view !== null) {
    objects.push({
      name: view,
      kind: 'view',
      comment: currentViewComment(table),
      columns: currentViewColumns(table).map((v) => ({
        name: v.name,
        comment: v.labelOf ? labelComment(v.labelOf) : columnComment(v.column),
      })),
    });
  }
  return objects;
}

export const commentKey = (table: string, column: string | null = null): string =>
  column === null ? table : `${table}.${column}`;

/** The comments of every table, view and column of `schema` (every column listed, with a comment or not). */
export async function readComments(runner: SqlRunner, dialect: SqlDialect, schema: string): Promise<StoredComments> {
  const { rows } = await runner.run(dialect.commentsQuery, [schema]);
  const stored: StoredComments = new Map();
  for (const r of rows) {
    const column = r.column_name === null ? null : String(r.column_name);
    stored.set(commentKey(String(r.table_name), column), r.comment === null ? null : String(r.comment));
  }
  return stored;
}

/**
 * The `COMMENT ON` statements that bring `stored` to `objects`: only for objects and columns that exist and whose
 * comment differs, so a warehouse already described costs one catalog read. An empty comment is left alone. Without
 * `stored` (objects made in the same transaction), every comment.
 */
export function commentStatements(
  objects: readonly CatalogObject[],
  stored: StoredComments | null,
  qualify: (name: string) => string,
): string[] {
  const statements: string[] = [];
  const exists = (key: string): boolean => stored === null || stored.has(key);
  const differs = (key: string, comment: string): boolean =>
    comment !== '' && exists(key) && (stored === null || stored.get(key) !== comment);
  for (const o of objects) {
    if (!exists(commentKey(o.name))) continue;
    if (differs(commentKey(o.name), o.comment)) {
      statements.push(`COMMENT ON ${o.kind === 'view' ? 'VIEW' : 'TABLE'} ${qualify(o.name)} IS ${literal(o.comment)}`);
    }
    for (const c of o.columns) {
      if (differs(commentKey(o.name, c.name), c.comment)) {
        statements.push(`COMMENT ON COLUMN ${qualify(o.name)}.${ident(c.name)} IS ${literal(c.comment)}`);
      }
    }
  }
  return statements;
}

/** Statements run this many to a round trip: a first migration comments some 3,000 columns. */
const batch = 400;

/**
 * Brings the comments of `objects` in `schema` up to date (see commentStatements). Returns how many changed. Runs in
 * the caller's transaction when `runner` is one.
 */
export async function applyComments(
  runner: SqlRunner,
  dialect: SqlDialect,
  objects: readonly CatalogObject[],
  schema: string,
  qualify: (name: string) => string,
): Promise<number> {
  const statements = commentStatements(objects, await readComments(runner, dialect, schema), qualify);
  for (let i = 0; i < statements.length; i += batch) {
    await runner.run(statements.slice(i, i + batch).join(';\n'));
  }
  return statements.length;
}
