import type { Promotion } from '../normalize/promotions.ts';
import type { SqlDialect } from './types.ts';
import { ident } from './values.ts';

/**
 * The UPDATE that fills a promoted column from `_raw` for rows already held, reading as `promotedValue` does
 * (normalize/promotions.ts): a value of another shape stays NULL. Only NULL cells with a value to give change, so
 * running it again changes nothing.
 */
export function backfillSql(dialect: SqlDialect, qualified: string, p: Promotion): string {
  const path = p.type === 'reference' ? [...p.path, 'id'] : [...p.path];
  const expr = dialect.rawValue(path, p.type);
  const column = ident(p.column);
  return `UPDATE ${qualified} SET ${column} = ${expr} WHERE ${column} IS NULL AND (${expr}) IS NOT NULL`;
}
