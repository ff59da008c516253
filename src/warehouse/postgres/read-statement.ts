import type pg from 'pg';
import type { CellValue } from '../../normalize/table-def.ts';
import { ConfigError } from '../../util/errors.ts';
import type { StatementResult } from '../types.ts';

/** int2, int4, int8, oid, float4, float8, numeric. */
const numericTypes = new Set([21, 23, 20, 26, 700, 701, 1700]);

/**
 * One statement in a READ ONLY transaction, rolled back after: Postgres refuses any write in it (SQLSTATE 25006).
 * Sent by the extended protocol, which takes a single statement only, so a second one never runs.
 */
export async function readStatement(pool: pg.Pool, sql: string): Promise<StatementResult> {
  if (sql.trim() === '') throw new ConfigError('no SQL statement given');
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN TRANSACTION READ ONLY');
    try {
      // `queryMode` is pg's (lib/query.js) but missing from its types.
      const config = { text: sql, rowMode: 'array', queryMode: 'extended' } as pg.QueryArrayConfig;
      const result = await client.query<CellValue[]>(config);
      const names = deduplicated(result.fields.map((f) => f.name));
      return {
        columns: result.fields.map((f, i) => ({ name: names[i] ?? f.name, numeric: numericTypes.has(f.dataTypeID) })),
        rows: result.rows,
      };
    } catch (e) {
      // 42601 is any syntax error; this message is the one for a second statement.
      if (/cannot insert multiple commands into a prepared statement/.test((e as Error).message))
        throw new ConfigError('one statement at a time: got more than one', { cause: e });
      if ((e as { code?: string }).code === '25006')
        throw new ConfigError(`only a statement that reads runs here: ${(e as Error).message}`, { cause: e });
      throw e;
    } finally {
      await client.query('ROLLBACK').catch((e: unknown) => (broken = e as Error));
    }
  } finally {
    client.release(broken);
  }
}

/** Names made unique as DuckDB makes them (`a`, `a:1`, `a:2`), so a JSON object keeps every column. */
function deduplicated(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const n = seen.get(name) ?? 0;
    seen.set(name, n + 1);
    return n === 0 ? name : `${name}:${n}`;
  });
}
