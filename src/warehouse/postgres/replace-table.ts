import { ident, literal } from '../values.ts';

/**
 * Analysts and BI tools build views on model tables, and Postgres refuses to drop a table a view depends on. So the
 * new rows are built aside and, when the table already has the same columns and types, replace its rows (DELETE +
 * INSERT: readers are never blocked and views stay); only a table whose columns changed is dropped and replaced.
 * Every name is qualified with the warehouse schema: the search path also holds `public`, where an unqualified DROP
 * of a model the schema does not have yet would drop another warehouse's table. One implicit transaction (a
 * multi-statement text; an explicit BEGIN would leave a pooled connection in an aborted transaction on failure).
 */
export function replaceTableSql(table: string, select: string): string {
  const name = literal(table);
  const next = literal(`_gf_next_${table}`);
  const columnsOf = (t: string): string =>
    `(SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute ` +
    `WHERE attrelid = to_regclass(quote_ident(current_schema()) || '.' || quote_ident(${t})) ` +
    `AND attnum > 0 AND NOT attisdropped)`;
  // CREATE TABLE without a schema creates in current_schema(), the warehouse's (it exists: migrations made it).
  return `CREATE TABLE ${ident(`_gf_next_${table}`)} AS ${select};
DO $gf$
DECLARE s text := current_schema();
BEGIN
  IF ${columnsOf(name)} IS NOT DISTINCT FROM ${columnsOf(next)} THEN
    EXECUTE format('DELETE FROM %I.%I', s, ${name});
    EXECUTE format('INSERT INTO %I.%I SELECT * FROM %I.%I', s, ${name}, s, ${next});
    EXECUTE format('DROP TABLE %I.%I', s, ${next});
  ELSE
    EXECUTE format('DROP TABLE IF EXISTS %I.%I', s, ${name});
    EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', s, ${next}, ${name});
  END IF;
END $gf$`;
}
