import { afterEach, describe, expect, it } from 'vitest';
import { createSiteClient } from '../../src/credentials/index.ts';
import { SiteResponseError } from '../../src/source/index.ts';
import { maxPagesWithoutProgress, pagesForCount } from '../../src/source/pagination.ts';
import type { FetchedPage, PaginateOptions, PaginationInfo, SiteClient } from '../../src/source/index.ts';
import { standInItem } from '../../src/util/json.ts';
import { json, MemoryStore, startServer, type Handler, type TestServer } from '../support/http-server.ts';

let server: TestServer | undefined;
let client: SiteClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

async function walk(handler: Handler, path: string, options?: PaginateOptions, perPage = 3) {
  server = await startServer(handler);
  client = createSiteClient({ baseUrl: server.url, store: new MemoryStore(), rate: 100, perPage, retryBaseMs: 5 });
  const gen = client.paginate(path, options);
  const pages: FetchedPage[] = [];
  for (;;) {
    const r = await gen.next();
    if (r.done)
      return { pages, info: r.value as PaginationInfo, ids: pages.flatMap((p) => p.records.map((x) => x.id)) };
    pages.push(r.value);
  }
}

const recs = (...ids: number[]) => ids.map((id) => ({ id, name: `r${id}` }));

describe('paginate', () => {
  it('walks an envelope following relative and absolute next links exactly', async () => {
    const { pages, info, ids } = await walk(
      (req, res) => {
        const u = new URL(req.url!, 'http://x');
        const cursor = u.searchParams.get('cursor');
        const origin = `http://${req.headers.host}`;
        if (!cursor) {
          expect(u.searchParams.get('per_page')).toBe('3');
          expect(u.searchParams.get('program')).toBe('7');
          return json(res, 200, {
            count: 7,
            results: recs(1, 2, 3),
            next: '/api/applications/?cursor=b&per_page=3',
            previous: null,
          });
        }
        if (cursor === 'b') {
          return json(res, 200, {
            count: 7,
            results: recs(4, 5, 6),
            next: `${origin}/api/applications/?cursor=c&per_page=3`,
            previous: 'x',
          });
        }
        return json(res, 200, { count: 7, results: recs(7), next: null, previous: 'y', extra: { ignored: true } });
      },
      '/api/applications/',
      { query: { program: 7 } },
    );
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(info).toEqual({
      pages: 3,
      records: 7,
      duplicates: 0,
      totalReported: 7,
      complete: true,
      stopReason: 'end',
      countMismatch: false,
    });
    expect(pages[1]!.url).toMatch(/\/api\/applications\/\?cursor=b&per_page=3$/);
    expect(pages[2]!.url).toMatch(/cursor=c/);
    expect(pages.every((p) => p.envelope && p.total === 7)).toBe(true);
    // The exact body text is kept for raw landing.
    expect(JSON.parse(pages[0]!.body)).toMatchObject({ count: 7 });
    expect(server!.arrivals.map((a) => a.path)).toEqual([
      '/api/applications/?per_page=3&program=7',
      '/api/applications/?cursor=b&per_page=3',
      '/api/applications/?cursor=c&per_page=3',
    ]);
  });

  it('takes a short bare array as one complete page', async () => {
    const { info, ids, pages } = await walk((_q, res) => json(res, 200, recs(1, 2)), '/api/programs/');
    expect(ids).toEqual([1, 2]);
    expect(pages[0]!.envelope).toBe(false);
    expect(info).toMatchObject({ pages: 1, records: 2, complete: true, stopReason: 'end' });
  });

  it('marks a bare array of exactly per_page records as possibly truncated', async () => {
    const { info } = await walk((_q, res) => json(res, 200, recs(1, 2, 3)), '/api/programs/');
    expect(info).toMatchObject({ pages: 1, records: 3, complete: false, stopReason: 'full_bare_array' });
  });

  it('marks a bare array of the spec default page size (25) as possibly truncated when more were asked for', async () => {
    const ids = Array.from({ length: 25 }, (_, i) => i + 1);
    const { info } = await walk((_q, res) => json(res, 200, recs(...ids)), '/api/programs/', undefined, 100);
    expect(info).toMatchObject({ pages: 1, records: 25, complete: false, stopReason: 'full_bare_array' });
  });

  it('a walk that reads fewer records than the count is not complete: a deletion moved records past it', async () => {
    // Page 2 is read after record 1 was deleted: 4 moved onto page 1, already read, and is never seen.
    const { info, ids } = await walk((req, res) => {
      const page = new URL(req.url!, 'http://x').searchParams.get('page') ?? '1';
      if (page === '1') return json(res, 200, { count: 5, results: recs(1, 2, 3), next: '?page=2' });
      return json(res, 200, { count: 4, results: recs(5), next: null });
    }, '/api/awards/');
    expect(ids).toEqual([1, 2, 3, 5]);
    expect(info).toMatchObject({ records: 4, totalReported: 4, complete: true });
    const short = await walk((req, res) => {
      const page = new URL(req.url!, 'http://x').searchParams.get('page') ?? '1';
      if (page === '1') return json(res, 200, { count: 5, results: recs(1, 2, 3), next: '?page=2' });
      return json(res, 200, { count: 5, results: recs(5), next: null });
    }, '/api/awards/');
    expect(short.info).toMatchObject({ records: 4, totalReported: 5, complete: false, stopReason: 'short_of_count' });
  });

  it('a walk that reads more records than the count (added meanwhile) is complete', async () => {
    const { info } = await walk(
      (_q, res) => json(res, 200, { count: 2, results: recs(1, 2, 3), next: null }),
      '/api/awards/',
    );
    expect(info).toMatchObject({ records: 3, complete: true, stopReason: 'end', countMismatch: true });
  });

  it('de-duplicates records that reappear on a later page and counts them', async () => {
    const { info, ids } = await walk((req, res) => {
      const page = new URL(req.url!, 'http://x').searchParams.get('page') ?? '1';
      if (page === '1') return json(res, 200, { results: recs(1, 2, 3), next: '?page=2' });
      if (page === '2') return json(res, 200, { results: recs(3, 4, 5), next: '?page=3' });
      return json(res, 200, { results: recs(5, 6), next: null });
    }, '/api/awards/');
    expect(ids).toEqual([1, 2, 3, 4, 5, 6]);
    expect(info).toMatchObject({ records: 6, duplicates: 2, complete: true });
  });

  it('uses keyOf, and never drops records without a key', async () => {
    const rows = [
      { a: 1, stage: 1 },
      { a: 1, stage: 1 },
      { a: 2, stage: 1 },
    ];
    const dflt = await walk((_q, res) => json(res, 200, { results: rows, next: null }), '/api/assignments/');
    expect(dflt.info).toMatchObject({ records: 3, duplicates: 0 });
    await client?.close();
    await server?.close();
    const keyed = await walk((_q, res) => json(res, 200, { results: rows, next: null }), '/api/assignments/', {
      keyOf: (r) => `${String(r.a)}:${String(r.stage)}`,
    });
    expect(keyed.info).toMatchObject({ records: 2, duplicates: 1 });
  });

  it('stops on a repeated next URL', async () => {
    const { info } = await walk((req, res) => {
      const page = new URL(req.url!, 'http://x').searchParams.get('page');
      json(res, 200, { results: recs(page === '2' ? 4 : 1), next: '?page=2' });
    }, '/api/funds/');
    expect(info).toMatchObject({ pages: 2, complete: false, stopReason: 'repeated_next' });
  });

  it('stops when page after page under new URLs holds only records already read', async () => {
    let n = 0;
    const { info, ids } = await walk((_q, res) => {
      n++;
      // Every page after the second repeats the first two pages' records, each under a URL never seen.
      json(res, 200, {
        results: n === 1 ? recs(1, 2, 3) : n === 2 ? recs(4, 5) : recs(2, 4, 5),
        next: `?page=${n + 1}`,
      });
    }, '/api/funds/');
    expect(ids).toEqual([1, 2, 3, 4, 5]);
    expect(info).toMatchObject({ complete: false, stopReason: 'no_progress', records: 5 });
    expect(info.pages).toBe(2 + maxPagesWithoutProgress);
  });

  it('keeps walking through a few pages of repeats when new records follow them', async () => {
    let n = 0;
    const repeats = maxPagesWithoutProgress - 1;
    const { info, ids } = await walk((_q, res) => {
      n++;
      const results = n === 1 ? recs(1, 2) : n <= 1 + repeats ? recs(1, 2) : recs(3);
      json(res, 200, { results, next: n <= 1 + repeats ? `?page=${n + 1}` : null });
    }, '/api/funds/');
    expect(ids).toEqual([1, 2, 3]);
    expect(info).toMatchObject({ complete: true, stopReason: 'end', pages: repeats + 2 });
  });

  it('stops on an empty page and at the page cap', async () => {
    const empty = await walk((_q, res) => json(res, 200, { results: [], next: '?page=9' }), '/api/funds/');
    expect(empty.info).toMatchObject({ pages: 1, records: 0, complete: true, stopReason: 'empty_page' });
    await client?.close();
    await server?.close();
    let n = 0;
    const capped = await walk(
      (_q, res) => json(res, 200, { results: recs(++n), next: `?page=${n + 1}` }),
      '/api/funds/',
      {
        maxPages: 4,
      },
    );
    expect(capped.info).toMatchObject({ pages: 4, records: 4, complete: false, stopReason: 'page_cap' });
  });

  it("stops a next chain that goes on far past the site's count of records", async () => {
    let n = 0;
    // Every page announces 5 records, yet links to another page of new ones, without end.
    const { info } = await walk(
      (_q, res) => json(res, 200, { count: 5, results: recs(++n * 3, n * 3 + 1, n * 3 + 2), next: `?page=${n + 1}` }),
      '/api/funds/',
    );
    expect(info).toMatchObject({ complete: false, stopReason: 'count_cap', pages: pagesForCount(5, 3) });
    expect(pagesForCount(5, 3)).toBe(13);
  });

  it('reports a count mismatch, and a list shorter than its count is not complete', async () => {
    const { info } = await walk((_q, res) => json(res, 200, { count: 10, results: recs(1, 2), next: null }), '/api/x/');
    expect(info).toMatchObject({ records: 2, totalReported: 10, countMismatch: true, complete: false });
  });

  it('refuses a next link to another origin', async () => {
    const err = await walk(
      (_q, res) => json(res, 200, { results: recs(1), next: 'https://evil.example.com/api/x/?page=2' }),
      '/api/x/',
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteResponseError);
    expect((err as Error).message).toMatch(/another origin/);
    expect(server!.arrivals).toHaveLength(1);
  });

  it('rejects a JSON object without results after retries', async () => {
    const err = await walk((_q, res) => json(res, 200, { detail: 'nope' }), '/api/x/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteResponseError);
    expect((err as Error).message).toMatch(/got an object with keys detail/);
  });

  it('passes a list item that is not an object on as a stand-in record, keeping the rest of the page', async () => {
    const { pages, info } = await walk((_q, res) => json(res, 200, [{ id: 1 }, null, 7, { id: 2 }]), '/api/x/', {}, 10);
    expect(info.complete).toBe(true);
    const records = pages.flatMap((p) => p.records);
    expect(records.map((r) => (standInItem(r) === undefined ? r.id : standInItem(r)!.item))).toEqual([1, null, 7, 2]);
  });

  it('rejects an array without any object (ids, messages: not a list of records) after retries', async () => {
    const err = await walk((_q, res) => json(res, 200, [1, 2, 3]), '/api/x/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteResponseError);
    expect((err as Error).message).toMatch(/got an array of number/);
  });
});
