import type { Promotion } from '../normalize/promotions.ts';
import type { Dialect } from './types.ts';
import { ident, literal } from './values.ts';

/**
 * The UPDATE that fills a promoted column from `_raw` for rows already held, reading as `promotedValue` does
 * (normalize/promotions.ts): a value of another shape stays NULL. Only NULL cells with a value to give change, so
 * running it again changes nothing.
 */
export function backfillSql(dialect: Dialect, qualified: string, p: Promotion): string {
  const path = p.type === 'reference' ? [...p.path, 'id'] : [...p.path];
  const expr = dialect === 'duckdb' ? duckdbExpr(path, p) : postgresExpr(path, p);
  const column = ident(p.column);
  return `UPDATE ${qualified} SET ${column} = ${expr} WHERE ${column} IS NULL AND (${expr}) IS NOT NULL`;
}

function duckdbExpr(path: readonly string[], p: Promotion): string {
  const at = literal(`$.${path.map((k) => `"${k}"`).join('.')}`);
  const t = `json_type(_raw, ${at})`;
  const s = `json_extract_string(_raw, ${at})`;
  const j = `json_extract(_raw, ${at})`;
  switch (p.type) {
    case 'json':
      return `CASE WHEN ${t} <> 'NULL' THEN ${j} END`;
    case 'integer':
    case 'reference':
      return `CASE WHEN ${t} IN ('BIGINT', 'UBIGINT', 'VARCHAR') AND regexp_full_match(${s}, '-?[0-9]{1,15}') THEN CAST(${s} AS BIGINT) END`;
    case 'number':
      return `CASE WHEN ${t} IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN CAST(${s} AS DOUBLE) END`;
    case 'boolean':
      return `CASE WHEN ${t} = 'BOOLEAN' THEN CAST(${s} AS BOOLEAN) END`;
    case 'text':
      return `CASE WHEN ${t} = 'VARCHAR' THEN ${s} WHEN ${t} <> 'NULL' THEN CAST(${j} AS VARCHAR) END`;
  }
}

function postgresExpr(path: readonly string[], p: Promotion): string {
  const at = `ARRAY[${path.map(literal).join(', ')}]`;
  const t = `json_typeof(_raw #> ${at})`;
  const s = `(_raw #>> ${at})`;
  const j = `(_raw #> ${at})`;
  switch (p.type) {
    case 'json':
      return `CASE WHEN ${t} <> 'null' THEN ${j} END`;
    case 'integer':
    case 'reference':
      return `CASE WHEN ${t} IN ('number', 'string') AND ${s} ~ '^-?[0-9]{1,15}$' THEN CAST(${s} AS BIGINT) END`;
    case 'number':
      return `CASE WHEN ${t} = 'number' THEN CAST(${s} AS DOUBLE PRECISION) END`;
    case 'boolean':
      return `CASE WHEN ${t} = 'boolean' THEN CAST(${s} AS BOOLEAN) END`;
    case 'text':
      return `CASE WHEN ${t} = 'string' THEN ${s} WHEN ${t} <> 'null' THEN CAST(${j} AS TEXT) END`;
  }
}
