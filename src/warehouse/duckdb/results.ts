import {
  DuckDBDecimalValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBMaterializedResult,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { CellValue } from '../../normalize/table-def.ts';
import type { ResultRow } from '../sql-runner.ts';
import { decimalValue, intValue, microsToIso } from '../values.ts';

/** One DuckDB value in the formats both dialects share (see values.ts). */
export function cellFromDuckDB(v: DuckDBValue): CellValue {
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return intValue(v);
  if (v instanceof DuckDBDecimalValue) return decimalValue(v.value, v.scale);
  if (v instanceof DuckDBTimestampTZValue) return v.isFinite ? microsToIso(v.micros, true) : v.toString();
  if (v instanceof DuckDBTimestampValue) return v.isFinite ? microsToIso(v.micros, false) : v.toString();
  return v.toString();
}

export async function rowsFromResult(result: DuckDBMaterializedResult): Promise<ResultRow[]> {
  const names = result.deduplicatedColumnNames();
  const rows = await result.getRows();
  return rows.map((values) => {
    const row: ResultRow = {};
    values.forEach((v, i) => {
      row[names[i] ?? `column${i}`] = cellFromDuckDB(v);
    });
    return row;
  });
}

/** Parameters: JS bigint would bind as HUGEINT, so integers within range go as numbers, bigger ones as strings. */
export function duckdbParams(params: readonly CellValue[]): DuckDBValue[] {
  return params.map((p) => (typeof p === 'bigint' ? intValue(p) : p));
}
