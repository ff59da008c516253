import type { JsonObject, JsonValue } from '../util/json.ts';

/**
 * Exact-match filters (the spec leaves the matching rule open): a reference field matches on its `id`,
 * booleans match `true/false/1/0`, everything else on its string form. Unknown parameters are ignored.
 */
export function applyFilters(
  rows: readonly JsonObject[],
  query: URLSearchParams,
  allowed: readonly string[],
): readonly JsonObject[] {
  const active = allowed.filter((k) => query.has(k));
  if (active.length === 0) return rows;
  return rows.filter((row) => active.every((k) => matches(row[k], query.get(k) ?? '')));
}

function matches(value: JsonValue | undefined, wanted: string): boolean {
  if (value === undefined) return false;
  if (value === null) return wanted === '' || wanted === 'null';
  if (typeof value === 'boolean')
    return wanted === String(value) || wanted === (value ? '1' : '0') || wanted.toLowerCase() === String(value);
  if (typeof value === 'object' && !Array.isArray(value)) return String(value['id']) === wanted;
  if (typeof value === 'number') return Number(wanted) === value && wanted.trim() !== '';
  return String(value) === wanted;
}

export interface PageRequest {
  readonly baseUrl: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly perPageDefault: number;
  readonly perPageMax: number;
  /** `reject`: a per_page above perPageMax is a 400 (as a DRF max_page_size validator would), not clamped. */
  readonly perPageOverMax?: 'cap' | 'reject';
}

export type PageResult = { status: 200; body: JsonObject } | { status: 400 | 404; body: JsonObject };

/** DRF-style page-number pagination with absolute next/previous URLs; an invalid page is a 404. */
export function paginate(rows: readonly JsonObject[], desc: boolean, req: PageRequest): PageResult {
  const rawPer = Number.parseInt(req.query.get('per_page') ?? '', 10);
  if (req.perPageOverMax === 'reject' && rawPer > req.perPageMax)
    return { status: 400, body: { per_page: [`Ensure this value is less than or equal to ${req.perPageMax}.`] } };
  const perPage = Number.isFinite(rawPer) && rawPer > 0 ? Math.min(rawPer, req.perPageMax) : req.perPageDefault;
  const rawPage = req.query.get('page');
  const page = rawPage === null ? 1 : /^\d+$/.test(rawPage) ? Number(rawPage) : NaN;
  const count = rows.length;
  const pages = Math.max(1, Math.ceil(count / perPage));
  if (!Number.isInteger(page) || page < 1 || page > pages) return { status: 404, body: { detail: 'Invalid page.' } };
  const start = (page - 1) * perPage;
  const end = Math.min(count, start + perPage);
  const results: JsonObject[] = [];
  if (desc) for (let i = count - 1 - start; i >= count - end; i--) results.push(rows[i] as JsonObject);
  else for (let i = start; i < end; i++) results.push(rows[i] as JsonObject);
  const link = (p: number): string => {
    const q = new URLSearchParams(req.query);
    q.set('page', String(p));
    return `${req.baseUrl}${req.path}?${q.toString()}`;
  };
  return {
    status: 200,
    body: { count, next: page < pages ? link(page + 1) : null, previous: page > 1 ? link(page - 1) : null, results },
  };
}

export function ordered(rows: readonly JsonObject[], desc: boolean): JsonObject[] {
  return desc ? [...rows].reverse() : [...rows];
}

/** Filtered lists are reused until the data changes: a filtered walk of 100k rows then costs one scan, not one per page. */
export class FilterCache {
  private readonly entries = new Map<
    string,
    { version: number; source: readonly JsonObject[]; rows: readonly JsonObject[] }
  >();

  filter(
    key: string,
    version: number,
    rows: readonly JsonObject[],
    query: URLSearchParams,
    allowed: readonly string[],
  ): readonly JsonObject[] {
    const active = allowed.filter((k) => query.has(k));
    if (active.length === 0) return rows;
    const fullKey = `${key}?${active.map((k) => `${k}=${query.get(k) ?? ''}`).join('&')}`;
    const hit = this.entries.get(fullKey);
    if (hit && hit.version === version && hit.source === rows) return hit.rows;
    const filtered = applyFilters(rows, query, allowed);
    if (this.entries.size >= 64) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(fullKey, { version, source: rows, rows: filtered });
    return filtered;
  }
}
