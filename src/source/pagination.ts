import type { Logger } from '../util/logger.ts';
import { isJsonObject, standInRecord, type JsonObject, type JsonValue } from '../util/json.ts';
import { oneLine, SiteHttpError, SiteResponseError } from './errors.ts';
import type { FetchedPage, PaginateOptions, PaginationInfo, StopReason } from './types.ts';

export interface ParsedPage {
  readonly records: JsonObject[];
  readonly next: string | null;
  readonly total: number | null;
  readonly envelope: boolean;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Parses a body as JSON; on failure says what it looked like (HTML, truncated, empty). */
export function parseJson(text: string): ParseResult<JsonValue> {
  if (text.trim() === '') return { ok: false, problem: 'empty body' };
  try {
    return { ok: true, value: JSON.parse(text) as JsonValue };
  } catch {
    const head = text.trimStart();
    if (head.startsWith('<')) return { ok: false, problem: `got HTML ${oneLine(head, 60)}` };
    if (head.startsWith('{') || head.startsWith('[')) return { ok: false, problem: 'truncated or invalid JSON' };
    return { ok: false, problem: `not JSON: ${oneLine(head, 60)}` };
  }
}

const expected = 'expected a JSON array or an object with `results`';

/** Accepts a bare array (one complete page) or an envelope `{results, next, previous, count?, ...}`. */
export function parseListPage(text: string): ParseResult<ParsedPage> {
  const json = parseJson(text);
  if (!json.ok) return { ok: false, problem: `${expected}; ${json.problem}` };
  const v = json.value;
  let items: JsonValue[];
  let next: string | null = null;
  let total: number | null = null;
  let envelope = false;
  if (Array.isArray(v)) {
    items = v;
  } else if (isJsonObject(v) && Array.isArray(v.results)) {
    envelope = true;
    items = v.results;
    const n = v.next;
    if (typeof n === 'string' && n.trim() !== '') next = n;
    else if (n !== null && n !== undefined && n !== '') {
      return { ok: false, problem: `\`next\` is a ${typeof n}, expected a URL string or null` };
    }
    const t = typeof v.count === 'number' ? v.count : typeof v.total === 'number' ? v.total : null;
    total = t !== null && Number.isFinite(t) ? t : null;
  } else {
    const got = isJsonObject(v) ? `an object with keys ${Object.keys(v).slice(0, 8).join(', ')}` : typeof v;
    return { ok: false, problem: `${expected}; got ${got}` };
  }
  // Items that are not objects become stand-ins the normaliser quarantines; a page with no object at all is not a
  // list of records (ids, messages), and reading it as one would make a complete walk soft-delete every row.
  if (items.length > 0 && !items.some(isJsonObject)) {
    return {
      ok: false,
      problem: `${expected}; got an array of ${typeof items[0]}${items[0] === null ? ' (null)' : ''}`,
    };
  }
  return { ok: true, value: { records: items.map(asRecord), next, total, envelope } };
}

/** A list item as a record: itself when it is an object, else a stand-in the normaliser quarantines. */
const asRecord = (item: JsonValue): JsonObject => (isJsonObject(item) ? item : standInRecord(item));

/**
 * Records of an endpoint that answers one object (eligibility): the object; each item of an array, as a list page's
 * (items that are not objects as stand-ins); nothing for `null`; any other value as a stand-in, so it is
 * quarantined rather than dropped.
 */
export function objectBodyRecords(v: JsonValue): JsonObject[] {
  if (isJsonObject(v)) return [v];
  if (v === null) return [];
  if (Array.isArray(v)) return v.map(asRecord);
  return [standInRecord(v)];
}

/** Default record key: `id` when it is a string or number; records without one are never de-duplicated. */
export function defaultKeyOf(record: JsonObject): string | undefined {
  const id = record.id;
  return typeof id === 'number' || typeof id === 'string' ? String(id) : undefined;
}

/**
 * Records of a page whose key is not in `seen` (their keys are added), and how many were repeats: pages shift while
 * a site changes, so a walk can meet a record twice. Records without a key always pass.
 */
export function unseenRecords(
  records: readonly JsonObject[],
  keyOf: (record: JsonObject) => string | undefined,
  seen: Set<string>,
): { fresh: JsonObject[]; repeated: number } {
  const fresh: JsonObject[] = [];
  let repeated = 0;
  for (const r of records) {
    const key = keyOf(r);
    if (key !== undefined) {
      if (seen.has(key)) {
        repeated++;
        continue;
      }
      seen.add(key);
    }
    fresh.push(r);
  }
  return { fresh, repeated };
}

export type PageFetcher = (
  url: URL,
) => Promise<{ status: number; page: ParsedPage; raw: string; url: string; fetchedAt: string }>;

/** The page size the spec gives a list endpoint without `per_page` (4.0). */
const defaultPageSize = 25;

/**
 * Pages in a row with no record not read before that end a walk. Records moving onto later pages while a list is
 * read repeat a few at a time; a run of whole pages of them is a paginator going round in circles under new URLs.
 */
export const maxPagesWithoutProgress = 20;

/**
 * Pages a walk may read for a list whose envelope announces `count` records, `perPage` a page at most: half as many
 * again plus 10, room for records shifting onto later pages while the list is read, yet a `next` chain that never
 * ends stops near the count instead of at the page cap (100,000 pages: hours at the site's rate).
 */
export function pagesForCount(count: number, perPage: number): number {
  return Math.ceil((Math.max(0, count) / Math.max(1, perPage)) * 1.5) + 10;
}

/** Walks `next` links from `first` (same origin only) and yields de-duplicated pages. */
export async function* walkPages(
  first: URL,
  fetchPage: PageFetcher,
  options: PaginateOptions & { perPage: number; logger: Logger },
): AsyncGenerator<FetchedPage, PaginationInfo> {
  const keyOf = options.keyOf ?? defaultKeyOf;
  const maxPages = options.maxPages ?? 100_000;
  const seenKeys = new Set<string>();
  const seenUrls = new Set<string>([first.href]);
  let url = first;
  let pages = 0;
  let records = 0;
  let duplicates = 0;
  let pagesWithoutProgress = 0;
  let totalReported: number | null = null;
  /** The most records a page held: the site's own page size, which may be below the one asked for. */
  let largestPage = 0;
  let stopReason: StopReason = 'end';

  for (;;) {
    let res: Awaited<ReturnType<PageFetcher>>;
    try {
      res = await fetchPage(url);
    } catch (error) {
      // A page past the first that is not there any more (Django: 404 "Invalid page.") means the list shrank while
      // it was read: the walk ends, incomplete, keeping what it read, rather than failing the stream.
      if (pages === 0 || !(error instanceof SiteHttpError) || error.status !== 404) throw error;
      stopReason = 'page_gone';
      options.logger.warn({ url: url.href }, 'a later page of the list is gone (the list shrank while read); stopping');
      break;
    }
    pages++;
    const { page } = res;
    const { fresh, repeated } = unseenRecords(page.records, keyOf, seenKeys);
    duplicates += repeated;
    records += fresh.length;
    if (page.total !== null) totalReported = page.total;
    largestPage = Math.max(largestPage, page.records.length);
    yield {
      url: res.url,
      status: res.status,
      fetchedAt: res.fetchedAt,
      records: fresh,
      repeated,
      body: res.raw,
      next: page.next,
      total: page.total,
      envelope: page.envelope,
    };

    if (!page.envelope) {
      // The site may ignore per_page and send its default page size (spec 4.0: 25) in a bare array.
      if (page.records.length === options.perPage || page.records.length === defaultPageSize) {
        stopReason = 'full_bare_array';
        options.logger.warn(
          { url: res.url, records: page.records.length },
          'bare array page is exactly per_page long; the list may be truncated',
        );
      }
      break;
    }
    if (page.records.length === 0) {
      stopReason = 'empty_page';
      break;
    }
    if (page.next === null) break;
    pagesWithoutProgress = fresh.length === 0 ? pagesWithoutProgress + 1 : 0;
    if (pagesWithoutProgress >= maxPagesWithoutProgress) {
      stopReason = 'no_progress';
      options.logger.warn(
        { url: res.url, pages: pagesWithoutProgress },
        'pagination returned only records already read, page after page; stopping',
      );
      break;
    }
    const nextUrl = new URL(page.next, url);
    if (nextUrl.origin !== first.origin) {
      throw new SiteResponseError(res.url, `\`next\` points to another origin (${nextUrl.origin})`);
    }
    if (seenUrls.has(nextUrl.href)) {
      stopReason = 'repeated_next';
      options.logger.warn({ url: res.url, next: nextUrl.href }, 'pagination repeated a next URL; stopping');
      break;
    }
    if (totalReported !== null && pages >= pagesForCount(totalReported, largestPage)) {
      stopReason = 'count_cap';
      options.logger.warn(
        { url: first.href, pages, count: totalReported },
        "pagination went on far past the site's count of records; stopping",
      );
      break;
    }
    if (pages >= maxPages) {
      stopReason = 'page_cap';
      options.logger.warn({ url: first.href, pages }, 'pagination stopped at the page cap');
      break;
    }
    seenUrls.add(nextUrl.href);
    url = nextUrl;
  }

  const countMismatch = totalReported !== null && totalReported !== records;
  // A deletion during the walk moves records onto pages already read: the walk ends normally without them, but
  // reads fewer than the count (the last page's). Taken as complete, it would soft-delete live records.
  if (totalReported !== null && records < totalReported && (stopReason === 'end' || stopReason === 'empty_page'))
    stopReason = 'short_of_count';
  const complete = stopReason === 'end' || stopReason === 'empty_page';
  if (countMismatch) {
    options.logger.warn(
      { url: first.href, totalReported, records, duplicates },
      'list count reported by the site differs from the records read',
    );
  }
  return { pages, records, duplicates, totalReported, complete, stopReason, countMismatch };
}
