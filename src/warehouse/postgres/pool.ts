import pg from 'pg';
import type { CellValue } from '../../normalize/table-def.ts';
import { ConfigError, ExitCode, firstLine, GrantflowError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { ResultRow, SqlRunner } from '../sql-runner.ts';
import { ident, intValue, numericText, pgTimestampText } from '../values.ts';
import { searchPathIsOurs, setsSearchPath } from '../../config/postgres-options.ts';
import { analyticsSchemaFor } from '../analytics-schema.ts';

/** Result parsers of our own pools only (pg's globals stay untouched): same value formats as DuckDB. */
const parsers = new Map<number, (text: string) => CellValue>([
  [20, (t) => intValue(t)], // int8
  [1700, numericText], // numeric
  [1184, (t) => pgTimestampText(t, true)], // timestamptz, as text to keep microseconds
  [1114, (t) => pgTimestampText(t, false)], // timestamp
  [1082, (t) => t], // date
  [114, (t) => t], // json: the stored text unchanged
  [3802, (t) => t], // jsonb
]);

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    parsers.get(oid) ?? pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Query parameters libpq and pg read as secrets (`?password=` works as well as `user:password@`). */
const secretParams = /^(password|sslpassword)$/i;

/** The URL with any password removed, for messages and `description`. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '';
    for (const key of [...u.searchParams.keys()]) if (secretParams.test(key)) u.searchParams.set(key, 'redacted');
    return u.toString().replace(/:@/, '@');
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1@').replace(/([?&](?:ssl)?password=)[^&]*/gi, '$1redacted');
  }
}

/**
 * The URL without its `options` parameter, and that parameter. pg lets every value of the URL override the same
 * key of the config object, so a URL's `options` (`?options=-c statement_timeout=600000`) replaced ours whole:
 * no UTC time zone, no search_path, and the models then read the role's default schema.
 */
function splitOptions(url: string): { connectionString: string; options: string | null } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { connectionString: url, options: null };
  }
  const options = u.searchParams.get('options');
  if (options === null) return { connectionString: url, options: null };
  u.searchParams.delete('options');
  return { connectionString: u.toString(), options };
}

export function connectionConfig(url: string, schema: string): pg.ClientConfig {
  const { connectionString, options } = splitOptions(url);
  // pg reads PGOPTIONS only when no options are given, and ours always are: put first, so the URL's and ours win.
  const fromEnv = process.env.PGOPTIONS?.trim();
  if (fromEnv && setsSearchPath(fromEnv))
    throw new ConfigError(
      `PGOPTIONS must not set search_path: ${searchPathIsOurs} (other options there, such as -c statement_timeout=..., are kept)`,
    );
  // Timestamps print in UTC; unqualified names (models, analysts' SQL) resolve in the warehouse schema. Quoted:
  // unquoted, Postgres would fold a mixed-case schema to lower case and read another schema's tables. After the
  // URL's own options (and PGOPTIONS), so these two win over a TimeZone or search_path given there (the last -c of a
  // name wins); a search_path there is refused, as its schema would be ignored (here, and config/settings.ts).
  // The analytics schema next (the models'), then public; a schema not created yet is skipped by Postgres.
  const ours = `-c TimeZone=UTC -c search_path=${ident(schema)},${ident(analyticsSchemaFor(schema))},public`;
  return {
    connectionString,
    types,
    options: [fromEnv, options?.trim(), ours].filter((o) => o).join(' '),
    application_name: 'grantflow',
  };
}

export function createPool(url: string, schema: string, logger: Logger): pg.Pool {
  const pool = new pg.Pool({ ...connectionConfig(url, schema), max: 8, idleTimeoutMillis: 10_000 });
  // An idle client whose backend dies emits here; without a listener the process would crash.
  pool.on('error', (e) => logger.warn({ err: e.message }, 'postgres connection lost'));
  return pool;
}

export function describeConnectError(url: string, e: unknown): ConfigError {
  const clean = firstLine(e).split(url).join(safeUrl(url));
  return new ConfigError(`cannot connect to Postgres warehouse ${safeUrl(url)}: ${clean}`, { cause: e });
}

export async function runOn(
  client: pg.ClientBase,
  sql: string,
  params: readonly CellValue[] = [],
): Promise<{ rows: ResultRow[]; changes: number }> {
  const res = await client.query<ResultRow>(sql, params.length > 0 ? params.map(pgParam) : undefined);
  // A multi-statement text returns an array of results.
  const last = Array.isArray(res) ? (res[res.length - 1] as pg.QueryResult<ResultRow> | undefined) : res;
  return { rows: last?.rows ?? [], changes: last?.rowCount ?? 0 };
}

function pgParam(v: CellValue): string | number | boolean | null {
  return typeof v === 'bigint' ? v.toString() : v;
}

export function poolRunner(pool: pg.Pool): SqlRunner {
  return {
    async run(sql, params) {
      const client = await pool.connect();
      let failed: Error | undefined;
      try {
        return await runOn(client, sql, params);
      } catch (e) {
        failed = isConnectionError(e) ? (e as Error) : undefined;
        throw e;
      } finally {
        client.release(failed);
      }
    },
  };
}

/** Errors after which the client must not go back to the pool. */
export function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return !code || code.startsWith('57P') || code.startsWith('08');
}

/**
 * One transaction on one pooled client; a client whose connection broke is destroyed, not reused. The pool listens
 * for errors of idle clients only: a backend that dies between two statements of the transaction (while we await
 * something else) emits 'error' on the checked-out client, which without this listener crashes the process.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (runner: SqlRunner) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (e: Error): void => {
    broken = e;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const out = await fn({ run: (sql, params) => runOn(client, sql, params) });
    await client.query('COMMIT');
    return out;
  } catch (e) {
    if (isConnectionError(e)) broken = e as Error;
    else if (!broken) await client.query('ROLLBACK').catch((err: unknown) => (broken = err as Error));
    if (!broken) throw e;
    // The server rolls back a transaction whose session ended; say so plainly (exit 1), a rerun continues.
    throw new GrantflowError(
      `lost the connection to the Postgres warehouse during a transaction, which was rolled back (${firstLine(e)}); rerun to continue`,
      ExitCode.runFailed,
      'warehouse_connection',
      { cause: e },
    );
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
