import type { Warehouse } from '../warehouse/types.ts';
import type { CellValue } from '../normalize/table-def.ts';
import { identifierValuesSql, pseudonymTable, type PersonalColumns } from './personal-columns.ts';
import { keyCheckInput, pseudonymKeyVariable, pseudonymToken } from './pseudonym-key.ts';
import { ConfigError } from '../util/errors.ts';
import { warehouseTables, type WarehouseTable } from './warehouse-tables.ts';

/** Rows per INSERT: two parameters each, well under either engine's limit. */
const insertBatch = 500;

export interface PseudonymRefresh {
  /** Tokens computed now: values new since the last refresh (all of them when the key changed). */
  readonly added: number;
  /** Tokens of values no table holds any longer, removed. */
  readonly removed: number;
  /** The key differed from the one the stored tokens were made with: every token was made again. */
  readonly keyChanged: boolean;
}

/** The union of every identifier value the tables hold, as one SQL query of a `value` column; null when none. */
function identifierValues(personal: PersonalColumns, tables: readonly WarehouseTable[]): string | null {
  const parts = tables.flatMap((t) =>
    t.table === pseudonymTable ? [] : identifierValuesSql(t.qualified, personal.identifiers(t.table, t.columns)),
  );
  return parts.length === 0 ? null : parts.join('\nUNION\n');
}

/**
 * Brings the token table in line with the tables: a token for each identifier value they hold that has none, made in
 * this process with `key` (which never reaches the warehouse), and none for a value they no longer hold (a purged
 * person's). A key other than the one the stored tokens were made with replaces them all, told by the `check:` row.
 * Run by a sync after its models, so snapshots, the report and the deidentified views find every token.
 */
export async function refreshPseudonyms(
  warehouse: Warehouse,
  key: string,
  personal: PersonalColumns,
): Promise<PseudonymRefresh> {
  const tokens = warehouse.qualify(pseudonymTable);
  const check = pseudonymToken(key, keyCheckInput);
  const [stored] = await warehouse.query(`SELECT token FROM ${tokens} WHERE value = $1`, [keyCheckInput]);
  const keyChanged = stored !== undefined && stored.token !== check;
  if (stored === undefined || keyChanged) {
    await warehouse.exec(`DELETE FROM ${tokens}`);
    await warehouse.query(`INSERT INTO ${tokens} (value, token) VALUES ($1, $2)`, [keyCheckInput, check]);
  }
  const removed = await pruneTokens(warehouse, personal);
  const values = identifierValues(personal, await warehouseTables(warehouse));
  if (values === null) return { added: 0, removed, keyChanged };
  const missing = await warehouse.query(
    `SELECT v.value FROM (${values}) v WHERE NOT EXISTS (SELECT 1 FROM ${tokens} p WHERE p.value = v.value)`,
  );
  for (let i = 0; i < missing.length; i += insertBatch) {
    const batch = missing.slice(i, i + insertBatch).map((r) => String(r.value));
    const params: CellValue[] = batch.flatMap((v) => [v, pseudonymToken(key, v)]);
    const rows = batch.map((_, j) => `($${2 * j + 1}, $${2 * j + 2})`).join(', ');
    await warehouse.query(`INSERT INTO ${tokens} (value, token) VALUES ${rows}`, params);
  }
  return { added: missing.length, removed, keyChanged };
}

/**
 * Removes the tokens of values no table holds any longer (their rows purged): the token table holds the identifiers
 * themselves, so a purged person must not live on there. Needs no key. Returns the rows removed.
 */
export async function pruneTokens(warehouse: Warehouse, personal: PersonalColumns): Promise<number> {
  const tokens = warehouse.qualify(pseudonymTable);
  const values = identifierValues(personal, await warehouseTables(warehouse));
  const [before] = await warehouse.query(`SELECT count(*) AS n FROM ${tokens}`);
  await warehouse.exec(
    values === null
      ? `DELETE FROM ${tokens} WHERE value <> '${keyCheckInput}'`
      : `DELETE FROM ${tokens} WHERE value <> '${keyCheckInput}' AND value NOT IN (SELECT v.value FROM (${values}) v)`,
  );
  const [after] = await warehouse.query(`SELECT count(*) AS n FROM ${tokens}`);
  return Number(before?.n ?? 0) - Number(after?.n ?? 0);
}

/**
 * For a command that reads only (`grantflow snapshot`, `grantflow report`): the stored tokens were made with `key`.
 * Otherwise a ConfigError (exit 2): tokens of another key would not match earlier snapshots, and none at all would
 * leave every identifier NULL.
 */
export async function checkTokenKey(warehouse: Warehouse, key: string): Promise<void> {
  let stored: CellValue | undefined;
  try {
    [{ token: stored } = { token: undefined }] = await warehouse.query(
      `SELECT token FROM ${warehouse.qualify(pseudonymTable)} WHERE value = $1`,
      [keyCheckInput],
    );
  } catch {
    stored = undefined;
  }
  if (stored === undefined)
    throw new ConfigError(
      `${warehouse.description} holds no tokens yet: run a sync with ${pseudonymKeyVariable} set before writing pseudonymised snapshots`,
    );
  if (stored !== pseudonymToken(key, keyCheckInput))
    throw new ConfigError(
      `the tokens in ${warehouse.description} were made with another ${pseudonymKeyVariable}: run a sync with this key first (it makes them again), or use the key of the last sync`,
    );
}
