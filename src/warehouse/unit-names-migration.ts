import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from './types.ts';
import { ident } from './values.ts';
import { onTable } from './on-table.ts';

/** A column an older version named otherwise; `percent`: its values were in percent and become fractions. */
interface RenamedColumn {
  readonly table: string;
  readonly from: string;
  readonly to: string;
  readonly percent?: true;
}

/**
 * Columns renamed so that a name says its unit (issue 41). Text money as the site sends it ("$27,986.17") was named
 * `awarded`, the name of a count in award_rates: it is `awarded_as_sent`, beside the amount `awarded_amount`. A
 * percentage (0 to 100) became a fraction from 0 to 1 named `*_rate`, as every ratio of the models is.
 */
export const renamedColumns: readonly RenamedColumn[] = [
  { table: 'applications', from: 'awarded', to: 'awarded_as_sent' },
  { table: 'awards', from: 'awarded', to: 'awarded_as_sent' },
  { table: 'payments', from: 'awarded', to: 'awarded_as_sent' },
  { table: 'funds', from: 'utilization', to: 'utilization_rate', percent: true },
  { table: 'application_stages', from: 'task_completion', to: 'task_completion_rate', percent: true },
];

/**
 * Renames them in a warehouse an older version made; a new warehouse is made with the new names by the catalog,
 * after this runs, so each step runs only where the old column is there and the new one is not. Values move with the
 * column (a percentage is divided by 100 in binary floating point, as the load now does: coerce.ts), nothing is
 * dropped. The `<table>_current` view follows: DuckDB binds `*` each time it is read; Postgres fixed the view's
 * columns when it was made, so a renamed one is renamed in the view too, and a view over a column whose type changes
 * (an integer percentage becomes a fraction) is dropped, for the catalog to make again right after. A view of the
 * user's own over such a column makes Postgres refuse the change: the migration then fails whole, changing nothing.
 */
export function unitNamesMigration(
  schema: string | null,
  schemaPrefix: string,
  dialect: SqlDialect,
  lockTimeout: string | null,
): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (lockTimeout !== null) await sql.raw(lockTimeout).execute(db);
      const columns = await columnsOf(db, schema ?? dialect.defaultSchema);
      const double = dialect.sqlType('double');
      for (const r of renamedColumns) {
        const have = columns.get(r.table);
        if (have?.get(r.from) === undefined || have.has(r.to)) continue;
        const table = `${schemaPrefix}${ident(r.table)}`;
        const view = `${schemaPrefix}${ident(`${r.table}_current`)}`;
        const retyped = r.percent === true && !/^(double|float)/i.test(have.get(r.from) ?? '');
        if (retyped) await sql.raw(`DROP VIEW IF EXISTS ${view}`).execute(db);
        const alter = (statement: string) => onTable(dialect, table, () => sql.raw(statement).execute(db));
        await alter(`ALTER TABLE ${table} RENAME COLUMN ${ident(r.from)} TO ${ident(r.to)}`);
        if (retyped)
          await alter(
            `ALTER TABLE ${table} ALTER COLUMN ${ident(r.to)} TYPE ${double} USING CAST(${ident(r.to)} AS ${double}) / 100`,
          );
        else if (r.percent === true)
          await sql.raw(`UPDATE ${table} SET ${ident(r.to)} = ${ident(r.to)} / 100`).execute(db);
        const renameInView = dialect.renameViewColumnSql(view, r.from, r.to);
        if (!retyped && renameInView !== null && columns.get(`${r.table}_current`)?.has(r.from))
          await alter(renameInView);
      }
    },
  };
}

/** Each table's (and view's) columns and their types, in `schema` of the current database. */
async function columnsOf(db: Kysely<unknown>, schema: string): Promise<Map<string, Map<string, string>>> {
  const { rows } = await sql<{ table_name: string; column_name: string; data_type: string }>`
    SELECT table_name, column_name, data_type FROM information_schema.columns
     WHERE table_schema = ${schema} AND table_catalog = current_database()`.execute(db);
  const out = new Map<string, Map<string, string>>();
  for (const r of rows) {
    const t = out.get(r.table_name) ?? new Map<string, string>();
    t.set(r.column_name, r.data_type);
    out.set(r.table_name, t);
  }
  return out;
}
