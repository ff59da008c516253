import { createHash } from 'node:crypto';
import { metadataColumns, type ColumnDef, type TableDef } from '../normalize/table-def.ts';
import type { SqlDialect } from './types.ts';
import { enumEntries, enumLabelSql, labelColumnName } from './enum-label-sql.ts';
import { ident } from './values.ts';

/** Whether rows of this table carry the metadata columns (_raw, _extracted_at, ...). */
export function hasMetadata(table: TableDef): boolean {
  return table.kind === 'entity' || table.kind === 'dimension' || table.kind === 'bridge';
}

/** The table's own columns plus the metadata ones (unless already listed), in table order. */
export function allColumns(table: TableDef): readonly ColumnDef[] {
  if (!hasMetadata(table)) return table.columns;
  const own = new Set(table.columns.map((c) => c.name));
  return [...table.columns, ...metadataColumns.filter((c) => !own.has(c.name))];
}

/**
 * The view of a table's current rows (not soft-deleted), beside it in the warehouse's schema: `<table>_current`, for
 * every table whose rows carry `_deleted_at`. Analysts read it instead of remembering `WHERE _deleted_at IS NULL`.
 */
export function currentViewName(table: TableDef): string | null {
  return hasMetadata(table) ? `${table.name}_current` : null;
}

/** A column of a `_current` view: a column of the table, or the label beside an enum code column (`labelOf`). */
export interface ViewColumn {
  readonly name: string;
  readonly column: ColumnDef;
  readonly labelOf?: ColumnDef;
}

/** The columns of a table's `_current` view: every column of the table, each enum code followed by its label. */
export function currentViewColumns(table: TableDef): ViewColumn[] {
  return allColumns(table).flatMap((c) =>
    c.enum === undefined
      ? [{ name: c.name, column: c }]
      : [
          { name: c.name, column: c },
          { name: labelColumnName(c.name), column: c, labelOf: c },
        ],
  );
}

/**
 * The view of current rows with the columns of currentViewColumns, named one by one. Postgres replaces a view only
 * when the new one keeps the old one's columns, in their order, and adds any after them (that keeps the views
 * analysts built on it): so the columns a view already has (`existing`, in order) come first, and the others after
 * them, in table order; a fresh view has each label right beside its code. An existing column the table still has
 * but the catalog no longer lists is kept, read as it is.
 */
export function createCurrentViewSql(
  dialect: SqlDialect,
  table: TableDef,
  qualifiedView: string,
  qualifiedTable: string,
  existing: readonly string[] = [],
): string {
  const wanted = new Map(currentViewColumns(table).map((v) => [v.name, v]));
  const order = [...existing, ...[...wanted.keys()].filter((n) => !existing.includes(n))];
  const select = order.map((name) => {
    const v = wanted.get(name);
    return v?.labelOf ? `${enumLabelSql(dialect, v.labelOf)} AS ${ident(name)}` : ident(name);
  });
  return `CREATE OR REPLACE VIEW ${qualifiedView} AS SELECT ${select.join(', ')} FROM ${qualifiedTable} WHERE _deleted_at IS NULL`;
}

function columnSql(dialect: SqlDialect, c: ColumnDef, pk: ReadonlySet<string>): string {
  return `${ident(c.name)} ${dialect.sqlType(c.type)}${c.notNull || pk.has(c.name) ? ' NOT NULL' : ''}`;
}

/** `qualified` is the (schema-qualified, quoted) table name. */
export function createTableSql(dialect: SqlDialect, table: TableDef, qualified: string): string {
  const pk = new Set(table.primaryKey);
  const cols = allColumns(table).map((c) => `  ${columnSql(dialect, c, pk)}`);
  if (table.primaryKey.length > 0 && dialect.declaresPrimaryKey) {
    cols.push(`  PRIMARY KEY (${table.primaryKey.map(ident).join(', ')})`);
  }
  return `CREATE TABLE IF NOT EXISTS ${qualified} (\n${cols.join(',\n')}\n)`;
}

/**
 * A column added to an existing table is always nullable: existing rows have no value for it, and
 * neither DuckDB nor Postgres can add a NOT NULL column without a default.
 */
export function addColumnSql(dialect: SqlDialect, qualified: string, c: ColumnDef): string {
  return `ALTER TABLE ${qualified} ADD COLUMN ${ident(c.name)} ${dialect.sqlType(c.type)}`;
}

/**
 * Stable fingerprint of the catalog's shape (names, kinds, columns, types, keys, and the labels of enum columns,
 * which the `_current` views spell out), not its descriptions. A new one has the migration remake every view.
 */
export function catalogFingerprint(tables: readonly TableDef[]): string {
  const shape = [...tables]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((t) => ({
      n: t.name,
      k: t.kind,
      c: allColumns(t).map((c) => [c.name, c.type, c.notNull === true, ...(c.enum ? [enumEntries(c.enum)] : [])]),
      p: t.primaryKey,
    }));
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}
