import { ident, literal } from '../values.ts';

/**
 * Analysts and BI tools build views on model tables, and Postgres refuses to drop a table a view depends on. So the
 * new rows are built aside and, when the table already has the same columns and types, replace its rows (DELETE +
 * INSERT: readers are never blocked and views stay); only a table whose columns changed is dropped and replaced.
 * The model lives in the `analytics` schema; a copy an older version built in the warehouse's own `schema` is moved
 * there first when the analytics schema has none (views on it follow the table), else dropped, so no model is left
 * twice. Every name is qualified: the search path also holds `public`, where an unqualified DROP of a model the
 * schema does not have yet would drop another warehouse's table. One implicit transaction (a multi-statement text;
 * an explicit BEGIN would leave a pooled connection in an aborted transaction on failure).
 */
export function replaceTableSql(
  table: string,
  select: string,
  schema: string,
  analytics: string,
  primaryKey: readonly string[] = [],
): string {
  const name = literal(table);
  const next = literal(`_gf_next_${table}`);
  const s = literal(analytics);
  // The key, on the table once it has the model's name (named after it: a key added to the `_gf_next_` table would
  // keep that name and collide with the next rebuild's), unless a kept table has it already; its ALTER waits for
  // readers as a DROP does.
  const key = primaryKey.map((c) => ident(c)).join(', ');
  const addKey =
    primaryKey.length === 0
      ? ''
      : `IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE contype = 'p' AND conrelid = to_regclass(quote_ident(s) || '.' || quote_ident(${name}))) THEN
    EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I PRIMARY KEY (%s)', s, ${name}, ${literal(`${table}_pkey`)}, ${literal(key)});
  END IF;`;
  const columnsOf = (t: string): string =>
    `(SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute ` +
    `WHERE attrelid = to_regclass(quote_ident(${s}) || '.' || quote_ident(${t})) ` +
    `AND attnum > 0 AND NOT attisdropped)`;
  return `DO $gf$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = ${literal(schema)} AND c.relname = ${name} AND c.relkind IN ('r', 'p')) THEN
    IF to_regclass(quote_ident(${s}) || '.' || quote_ident(${name})) IS NULL THEN
      EXECUTE format('ALTER TABLE %I.%I SET SCHEMA %I', ${literal(schema)}, ${name}, ${s});
    ELSE
      EXECUTE format('DROP TABLE %I.%I', ${literal(schema)}, ${name});
    END IF;
  END IF;
END $gf$;
CREATE TABLE ${ident(analytics)}.${ident(`_gf_next_${table}`)} AS ${select};
DO $gf$
DECLARE s text := ${s};
BEGIN
  IF ${columnsOf(name)} IS NOT DISTINCT FROM ${columnsOf(next)} THEN
    EXECUTE format('DELETE FROM %I.%I', s, ${name});
    EXECUTE format('INSERT INTO %I.%I SELECT * FROM %I.%I', s, ${name}, s, ${next});
    EXECUTE format('DROP TABLE %I.%I', s, ${next});
  ELSE
    EXECUTE format('DROP TABLE IF EXISTS %I.%I', s, ${name});
    EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', s, ${next}, ${name});
  END IF;
  ${addKey}
END $gf$`;
}
