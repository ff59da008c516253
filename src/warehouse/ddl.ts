import { createHash } from 'node:crypto';
import { metadataColumns, type ColumnDef, type TableDef } from '../normalize/table-def.ts';
import type { SqlDialect } from './types.ts';
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

/**
 * `SELECT *`, so the view has every column of the table. Postgres fixes the columns of `*` when the view is made:
 * a column added to the table later needs the view made again (CREATE OR REPLACE keeps views analysts built on it,
 * as added columns come last); DuckDB reads the table's columns each time.
 */
export function createCurrentViewSql(qualifiedView: string, qualifiedTable: string): string {
  return `CREATE OR REPLACE VIEW ${qualifiedView} AS SELECT * FROM ${qualifiedTable} WHERE _deleted_at IS NULL`;
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

/** Stable fingerprint of the catalog's shape (names, kinds, columns, types, keys), not its descriptions. */
export function catalogFingerprint(tables: readonly TableDef[]): string {
  const shape = [...tables]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((t) => ({
      n: t.name,
      k: t.kind,
      c: allColumns(t).map((c) => [c.name, c.type, c.notNull === true]),
      p: t.primaryKey,
    }));
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}
