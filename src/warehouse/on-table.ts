import type { SqlDialect } from './types.ts';

/**
 * Runs a statement about `table` (qualified), marking a lock timeout it meets with that table: an attempt of several
 * statements (a migration altering several tables) then tells the lock wait (postgres/lock-wait.ts) whose holders
 * to name.
 */
export async function onTable<T>(dialect: SqlDialect, table: string, statement: () => Promise<T>): Promise<T> {
  try {
    return await statement();
  } catch (e) {
    if (dialect.isLockTimeout(e)) Object.assign(e as object, { lockedTable: table });
    throw e;
  }
}
