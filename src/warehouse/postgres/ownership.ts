import type { SqlRunner } from '../sql-runner.ts';
import { ident } from '../values.ts';

/**
 * Grantflow's tables in `schema` (its `_grantflow_*` bookkeeping, and every table a catalog it applied lists) that
 * the connected role may not act as owner of. Migrations add columns and model rebuilds may drop and rename
 * tables, which only a table's owner (or a member of the owning role) may do; a role given CREATE on a schema whose
 * tables another role made would otherwise fail halfway through a run with "permission denied for table ...".
 * Returns a message naming the tables and the grant, or null. Analysts' own tables in the schema are not looked at.
 */
export async function unownedTablesProblem(runner: SqlRunner, schema: string, role: string): Promise<string | null> {
  const query = (names: string): string =>
    `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND (${names})
        AND NOT pg_has_role(c.relowner, 'USAGE')
      ORDER BY c.relname`;
  let { rows } = await runner.run(query(`c.relname LIKE '\\_grantflow\\_%'`), [schema]);
  if (rows.length === 0) {
    // The role owns the bookkeeping, so it may read which tables the catalogs it applied hold.
    const catalog = await runner.run(`SELECT to_regclass($1) IS NOT NULL AS found`, [
      `${ident(schema)}.${ident('_grantflow_catalog')}`,
    ]);
    if (catalog.rows[0]?.found !== true) return null;
    ({ rows } = await runner.run(
      query(
        `c.relname IN (SELECT json_array_elements_text(tables::json) FROM ${ident(schema)}.${ident('_grantflow_catalog')})`,
      ),
      [schema],
    ));
  }
  if (rows.length === 0) return null;
  const names = rows.map((r) => String(r.name));
  const owners = [...new Set(rows.map((r) => String(r.owner)))];
  const shown = names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ');
  return (
    `schema ${schema}: role ${role} does not own grantflow's tables there (${shown}, owned by ${owners.join(', ')}); ` +
    'migrations and model rebuilds alter and replace them, which only their owner may do: run grantflow as ' +
    `${owners.length === 1 ? 'that role' : 'their owner'}, or make ${role} a member ` +
    `(${owners.map((o) => `GRANT ${ident(o)} TO ${ident(role)}`).join('; ')})`
  );
}
