import { createHash } from 'node:crypto';

import type { Row } from '../normalize/table-def.ts';
import type { StreamCatalog } from '../streams/catalog.ts';

/**
 * References repeat a lot (every application names its program, stage and applicant): a medium site yields ~330k
 * reference rows for ~10k distinct ones. Staging only a reference that is richer than the one already staged for
 * its key gives the warehouse's merge the same winner (see `richness` in warehouse/merge-sql.ts: longer source JSON
 * in code points, then the larger md5) at a fraction of the rows.
 */
export class ReferenceDedup {
  private readonly staged = new Map<string, Map<string, string>>();
  private readonly primaryKeys = new Map<string, readonly string[]>();

  constructor(private readonly catalog: Pick<StreamCatalog, 'tableByName'>) {}

  /** True when `row` must be staged; false when a reference at least as rich is already staged for its key. */
  admit(table: string, row: Row): boolean {
    const raw = row._raw;
    if (typeof raw !== 'string') return true;
    let byKey = this.staged.get(table);
    if (!byKey) this.staged.set(table, (byKey = new Map()));
    const key = this.keyOf(table, row);
    const previous = byKey.get(key);
    if (previous !== undefined && (previous === raw || !richer(raw, previous))) return false;
    byKey.set(key, raw);
    return true;
  }

  private keyOf(table: string, row: Row): string {
    let pk = this.primaryKeys.get(table);
    if (!pk) this.primaryKeys.set(table, (pk = this.catalog.tableByName(table)?.primaryKey ?? ['id']));
    return pk.length === 1 ? String(row[pk[0]!]) : pk.map((c) => String(row[c])).join('\u0000');
  }
}

/** The warehouse's order of references: more code points first, then the larger md5 hex (both engines agree). */
export function richer(a: string, b: string): boolean {
  const la = codePoints(a);
  const lb = codePoints(b);
  if (la !== lb) return la > lb;
  return md5(a) > md5(b);
}

function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

const md5 = (s: string): string => createHash('md5').update(s, 'utf8').digest('hex');
