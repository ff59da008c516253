/**
 * What the way grantflow was started leaves open, whatever the settings say: `doctor` reports these, `sync` refuses
 * the first.
 */

/** Certificate checks switched off for the whole process: anyone on the path can pose as the site. */
export function insecureTlsProblem(env: NodeJS.ProcessEnv): string | null {
  return env.NODE_TLS_REJECT_UNAUTHORIZED === '0'
    ? 'NODE_TLS_REJECT_UNAUTHORIZED=0 turns certificate checks off; unset it, or pass --allow-insecure-tls'
    : null;
}

/** A password in a --warehouse URL given on the command line, which other local users see in `ps`. */
export function commandLinePasswordProblem(warehouseFlag: unknown): string | null {
  if (typeof warehouseFlag !== 'string' || !/^postgres(ql)?:\/\//i.test(warehouseFlag)) return null;
  let password = '';
  try {
    password = new URL(warehouseFlag).password;
  } catch {
    return null; // the warehouse check says what is wrong with the URL
  }
  return password
    ? '--warehouse holds a password, which other local users see in ps: use PGPASSWORD, a .pgpass file or GRANTFLOW_WAREHOUSE (docs/postgres.md)'
    : null;
}
