import type { ResultRow, SqlRunner } from '../sql-runner.ts';
import { ident } from '../values.ts';
import { analyticsSchemaFor } from '../analytics-schema.ts';
import { privilegesDoc } from '../../util/doc-pointers.ts';

/**
 * What a role may do in the warehouse's schema, checked when it is opened, before anything is written: a missing
 * grant is a ConfigError naming the GRANT, never a command failing halfway with "permission denied".
 */

/** How `open` found the schema: fine (`ok`), a problem to report, or missing but creatable (doctor's check only). */
export type SchemaAccess = { readonly ok: true } | { readonly problem: string } | { readonly notYet: string };

/**
 * `create: false` (commands on a synced warehouse): a missing schema is reported, not created. With `writes`
 * (`create`, or a command that rebuilds models), the role must be able to create tables in the schema (migrations,
 * staging tables), and to create the schema if it is missing; either lacking is a problem naming the grant, before
 * anything is written; so are grantflow tables in it another role owns, the `models` it rebuilds included (see
 * unownedTablesProblem). A schema that exists is not created again: `CREATE SCHEMA IF NOT EXISTS` needs CREATE on the
 * database even then, which a role given only its own schema on a shared database lacks.
 */
export async function checkSchemaAccess(
  runner: SqlRunner,
  schema: string,
  options: { readonly create: boolean | 'check'; readonly writes: boolean; readonly models?: readonly string[] },
): Promise<SchemaAccess> {
  const { create, writes } = options;
  const r = await schemaPrivileges(runner, schema);
  const role = ident(String(r.role));
  if (!create && r.found !== true)
    return { problem: `has no schema ${schema}; check --schema, or run \`grantflow sync\` first` };
  if (!writes && r.may_use !== true)
    // Without USAGE the schema drops out of the search path: tables would read as missing, not as refused.
    return {
      problem:
        `schema ${schema}: role ${String(r.role)} may not use it; ` +
        `grant it (GRANT USAGE ON SCHEMA ${ident(schema)} TO ${role}); ${privilegesDoc} lists what each command needs`,
    };
  // Read only: SELECT on the tables is all it needs, and a query without it says so (42501, see runAction).
  if (!writes) return { ok: true };
  if (r.found !== true && r.may_create_schema !== true)
    return {
      problem:
        `has no schema ${schema} and role ${String(r.role)} may not create one in database ${String(r.db)}; ` +
        `have it created for grantflow (CREATE SCHEMA ${ident(schema)} AUTHORIZATION ${role}), or pick an existing schema with --schema`,
    };
  if (r.found !== true && create === 'check')
    return {
      notYet: `has no schema ${schema} yet; the first sync creates it (role ${String(r.role)} may create schemas in database ${String(r.db)})`,
    };
  if (r.found !== true) {
    // Another sync starting at the same moment may create it between the check and here: IF NOT EXISTS does not
    // cover that race (unique_violation on pg_namespace); it then exists, and the run lock decides who runs.
    await runner.run(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`).catch((e: unknown) => {
      if ((e as { code?: string }).code !== '23505') throw e;
    });
    return { ok: true };
  }
  if (r.may_create_tables !== true)
    return {
      problem:
        `schema ${schema}: role ${String(r.role)} may not create tables in it; ` +
        `grant it (GRANT USAGE, CREATE ON SCHEMA ${ident(schema)} TO ${role}), or give grantflow a schema of its own with --schema`,
    };
  const problem =
    (await unownedTablesProblem(runner, schema, String(r.role), options.models)) ??
    (await analyticsSchemaProblem(runner, schema, String(r.role), options.models ?? []));
  return problem === null ? { ok: true } : { problem };
}

/**
 * A command that rebuilds `models` writes them to the analytics schema (analytics-schema.ts): the role must be able to
 * create it when it is missing (CREATE on the database; the first model run creates it), or create tables in it, and
 * own the model tables there. Returns the problem naming the grant, or null.
 */
async function analyticsSchemaProblem(
  runner: SqlRunner,
  schema: string,
  role: string,
  models: readonly string[],
): Promise<string | null> {
  if (models.length === 0) return null;
  const analytics = analyticsSchemaFor(schema);
  const r = await schemaPrivileges(runner, analytics);
  if (r.found !== true)
    return r.may_create_schema === true
      ? null
      : `has no schema ${analytics} for the models of schema ${schema}, and role ${role} may not create one; have it ` +
          `created for grantflow (CREATE SCHEMA ${ident(analytics)} AUTHORIZATION ${ident(role)})`;
  if (r.may_create_tables !== true)
    return (
      `schema ${analytics} (the models of schema ${schema}): role ${role} may not create tables in it; ` +
      `grant it (GRANT USAGE, CREATE ON SCHEMA ${ident(analytics)} TO ${ident(role)})`
    );
  return unownedModelsProblem(runner, analytics, role, models);
}

/**
 * information_schema hides a table the role may not read: a reader without SELECT on one of grantflow's tables
 * would take it for missing, and `models test` would ask for CREATE to migrate it. The missing SELECT is named
 * instead (pg_class lists every table, readable or not). Returns the problem, or null.
 */
export async function unreadableTablesProblem(
  runner: SqlRunner,
  schema: string,
  tables: readonly string[],
): Promise<string | null> {
  const { rows } = await runner.run(
    `SELECT c.relname, current_user AS role FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = ANY($2::text[]) AND NOT has_table_privilege(c.oid, 'SELECT')
      ORDER BY c.relname`,
    [schema, `{${tables.join(',')}}`],
  );
  const first = rows[0];
  if (!first) return null;
  const role = String(first.role);
  const more = rows.length > 1 ? ` (and ${rows.length - 1} more of its tables)` : '';
  return (
    `schema ${schema}: role ${role} may not read table ${String(first.relname)}` +
    `${more}; grant it (GRANT SELECT ON ALL TABLES IN SCHEMA ${ident(schema)} TO ${ident(role)}); ` +
    `${privilegesDoc} lists what each command needs`
  );
}

/**
 * Whether the schema holds a stored credential pair for `site` (null: for any site), read without creating anything
 * (false when the schema or its credentials table does not exist yet). A schema or table the role may not read
 * counts as holding one: it cannot be told here, and opening the warehouse names the missing grant (a permission
 * error here would read as "cannot connect").
 */
export async function schemaHoldsCredentials(runner: SqlRunner, schema: string, site: string | null): Promise<boolean> {
  const table = `${ident(schema)}.${ident('_grantflow_credentials')}`;
  const access = await schemaPrivileges(runner, schema);
  if (access.found !== true) return false;
  if (access.may_use !== true) return true;
  const found = await runner.run(
    `SELECT to_regclass($1) IS NOT NULL AS found, to_regclass($1) IS NOT NULL AND has_table_privilege(to_regclass($1), 'SELECT') AS readable`,
    [table],
  );
  if (found.rows[0]?.found !== true) return false;
  if (found.rows[0]?.readable !== true) return true;
  // null: a pair of any site (one that moved keeps the pair stored for its old address, see SyncCredentials).
  if (site === null) return (await runner.run(`SELECT 1 FROM ${table} LIMIT 1`)).rows.length > 0;
  return (await runner.run(`SELECT 1 FROM ${table} WHERE site = $1`, [site])).rows.length > 0;
}

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
  let rows = await tablesNotOwned(runner, schema, `c.relname LIKE '\\_grantflow\\_%'`);
  if (rows.length === 0) {
    // The role owns the bookkeeping, so it may read which tables the catalogs it applied hold.
    const catalog = await runner.run(`SELECT to_regclass($1) IS NOT NULL AS found`, [
      `${ident(schema)}.${ident('_grantflow_catalog')}`,
    ]);
    if (catalog.rows[0]?.found !== true) return null;
    rows = await tablesNotOwned(
      runner,
      schema,
      `c.relname IN (SELECT json_array_elements_text(tables::json) FROM ${ident(schema)}.${ident('_grantflow_catalog')})`,
    );
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
  const rows = await tablesNotOwned(runner, schema, `c.relname = ANY($2::text[])`, [`{${models.join(',')}}`]);
  if (rows.length === 0) return null;
  const owned = rows.map((r) => `${String(r.name)} owned by ${String(r.owner)}`).join(', ');
  const fixes = rows.map((r) => `ALTER TABLE ${ident(schema)}.${ident(String(r.name))} OWNER TO ${ident(role)}`);
  return (
    `schema ${schema}: role ${role} does not own model tables it rebuilds there (${owned}), and only their owner may ` +
    `replace them: as a superuser, run ${fixes.join('; ')}`
  );
}

/**
 * The role's view of `schema` (and of the database, for creating it): `found`, `may_use`, `may_create_tables`,
 * `may_create_schema`, with `role` and `db` for messages. One row even when the schema does not exist.
 */
async function schemaPrivileges(runner: SqlRunner, schema: string): Promise<ResultRow> {
  const { rows } = await runner.run(
    `SELECT current_user AS role, current_database() AS db, n.oid IS NOT NULL AS found,
       has_database_privilege(current_database(), 'CREATE') AS may_create_schema,
       n.oid IS NOT NULL AND has_schema_privilege(n.oid, 'USAGE') AS may_use,
       n.oid IS NOT NULL AND has_schema_privilege(n.oid, 'USAGE') AND has_schema_privilege(n.oid, 'CREATE')
         AS may_create_tables
     FROM (SELECT 1) AS one LEFT JOIN pg_namespace n ON n.nspname = $1`,
    [schema],
  );
  return rows[0] ?? {};
}

/** Tables of `schema` matching `names` (SQL on `c`, pg_class; `$2`... are `params`) the role may not act as owner of. */
async function tablesNotOwned(
  runner: SqlRunner,
  schema: string,
  names: string,
  params: readonly string[] = [],
): Promise<ResultRow[]> {
  const { rows } = await runner.run(
    `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND (${names}) AND NOT pg_has_role(c.relowner, 'USAGE')
      ORDER BY c.relname`,
    [schema, ...params],
  );
  return rows;
}
