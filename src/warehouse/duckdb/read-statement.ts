import { DuckDBTypeId, StatementType } from '@duckdb/node-api';
import { ConfigError } from '../../util/errors.ts';
import type { StatementResult } from '../types.ts';
import { cellFromDuckDB } from './results.ts';
import type { DuckDBSession } from './session.ts';

const numericTypes = new Set<DuckDBTypeId>([
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.UHUGEINT,
  DuckDBTypeId.FLOAT,
  DuckDBTypeId.DOUBLE,
  DuckDBTypeId.DECIMAL,
  DuckDBTypeId.BIGNUM,
]);

/**
 * Statements that only read. The file is open read-only already, but a COPY ... TO, an ATTACH, an INSTALL or a
 * temporary table would still write elsewhere: only these run.
 */
const readingStatements = new Set<StatementType>([StatementType.SELECT, StatementType.EXPLAIN]);

/** One statement on `session` (the warehouse's own connection, pointed at its schema), refused unless it reads. */
export function readStatement(session: DuckDBSession, sql: string): Promise<StatementResult> {
  return session.exclusive(async () => {
    // DuckDB answers text with no statement in it (a comment alone) with an error of its bindings.
    const statements = await session.connection.extractStatements(sql).catch((e: unknown) => {
      throw /native callback/i.test((e as Error).message) ? new ConfigError('no SQL statement given') : e;
    });
    if (statements.count !== 1)
      throw new ConfigError(
        statements.count === 0 ? 'no SQL statement given' : `one statement at a time: got ${statements.count}`,
      );
    const prepared = await statements.prepare(0);
    if (!readingStatements.has(prepared.statementType))
      throw new ConfigError(
        `only a statement that reads (SELECT, WITH ... SELECT, EXPLAIN, DESCRIBE, SHOW) runs here: got a ${StatementType[prepared.statementType]} statement`,
      );
    const result = await prepared.runAndReadAll();
    const names = result.deduplicatedColumnNames();
    return {
      columns: names.map((name, i) => ({ name, numeric: numericTypes.has(result.columnTypeId(i)) })),
      rows: result.getRows().map((row) => row.map(cellFromDuckDB)),
    };
  });
}
