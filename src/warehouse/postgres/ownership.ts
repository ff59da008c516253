import type { SqlRunner } from '../sql-runner.ts';
import { ident } from '../values.ts';

/**
 * Grantflow's tables in `schema` (its `_grantflow_*` bookkeeping, and every table a catalog it applied lists) that
 * the connected role may not act as owner of. Migrations add columns and model rebuilds may drop and rename
 * tables, which only a table's owner (or a member of the owning role) may do; a role given CREATE on a schema whose
 * tables another role made would otherwise fail halfway through a run with "permission denied for table ...".
 * Returns a message naming the tables and the grant, or null. Analysts' own tables in the schema are not looked at,
 * except tables named as one of `models`, the models the command rebuilds (see unownedModelsProblem).
 */
export async function unownedTablesProblem(
  runner: SqlRunner,
  schema: string,
  role: string,
  models: readonly string[] = [],
): Promise<string | null> {
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
  if (rows.length === 0) return unownedModelsProblem(runner, schema, role, models);
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

/**
 * The model tables a command rebuilds (`models`), when the rest of the schema is the role's own. One another role owns
 * (an admin ran `models run` as a superuser after an upgrade changed its columns, or handed it to a reporting role)
 * would fail its rebuild halfway through the models, the earlier ones already replaced. Named before anything is
 * written, with the statement that hands each back: a model table is grantflow's to replace.
 */
async function unownedModelsProblem(
  runner: SqlRunner,
  schema: string,
  role: string,
  models: readonly string[],
): Promise<string | null> {
  if (models.length === 0) return null;
  const { rows } = await runner.run(
    `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT pg_has_role(c.relowner, 'USAGE')
        AND c.relname = ANY($2::text[])
      ORDER BY c.relname`,
    [schema, `{${models.join(',')}}`],
  );
  if (rows.length === 0) return null;
  const owned = rows.map((r) => `${String(r.name)} owned by ${String(r.owner)}`).join(', ');
  const fixes = rows.map((r) => `ALTER TABLE ${ident(schema)}.${ident(String(r.name))} OWNER TO ${ident(role)}`);
  return (
    `schema ${schema}: role ${role} does not own model tables it rebuilds there (${owned}), and only their owner may ` +
    `replace them: as a superuser, run ${fixes.join('; ')}`
  );
}
