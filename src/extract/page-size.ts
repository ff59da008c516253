import { SiteHttpError } from '../source/index.ts';
import type { SiteClient } from '../source/types.ts';
import { isJsonObject } from '../util/json.ts';
import type { Logger } from '../util/logger.ts';
import type { Warehouse } from '../warehouse/types.ts';
import type { Mutex } from './mutex.ts';
import { readStreamState } from './state.ts';

/** The page size asked for when finding the largest the site honours (the spec does not say, 8. Limits). */
export const probePageSize = 500;

/** The list probed, and whose state keeps the answer: the largest list of a site. */
const probeStream = 'applications';
const probePath = '/api/applications/';

/** How the page size in a stream's state was found. */
export type PageSizeFinding = 'honoured' | 'capped' | 'rejected' | 'one page';

interface ProbeContext {
  readonly client: SiteClient;
  readonly warehouse: Warehouse;
  readonly mutex: Mutex;
  readonly runId: string;
  readonly extractedAt: string;
  readonly logger: Logger;
}

/**
 * The page size lists are read with: the one a previous run found (kept in the applications stream's state), or
 * found now with one request, the first page of applications at `per_page=500`:
 *
 * - 500 records came back: the site honours 500;
 * - fewer, with a `next` link: the site caps page sizes at what came back, which is used;
 * - the whole list on that page: 500 was accepted and nothing larger can be learnt (a cap above the list's length
 *   would only give more pages, which a walk follows anyway), so 500;
 * - a 400 or 422: the site refuses large pages; `configured` it is, and kept, so no later run asks again.
 *
 * Anything else (a bare array, a 403, the site unreachable for now) says nothing: `configured` is used and the next
 * run asks again. Never fails the sync, not even on credentials rejected or a stop: its streams meet those
 * themselves, and the run is recorded as they end it.
 */
export async function detectPageSize(ctx: ProbeContext, configured: number): Promise<number> {
  const state = await readStreamState(ctx, probeStream);
  if (typeof state.pageSize === 'number' && Number.isSafeInteger(state.pageSize) && state.pageSize > 0)
    return state.pageSize;
  let found: { size: number; how: PageSizeFinding } | null;
  try {
    found = readProbe((await ctx.client.getJson(probePath, { per_page: probePageSize })).body);
  } catch (error) {
    if (error instanceof SiteHttpError && (error.status === 400 || error.status === 422)) {
      found = { size: configured, how: 'rejected' };
    } else {
      ctx.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        `could not find the largest page size the site honours; reading pages of ${configured}`,
      );
      return configured;
    }
  }
  if (found === null) return configured;
  ctx.logger.info(
    { pageSize: found.size, found: found.how },
    found.how === 'rejected'
      ? `the site refuses pages of ${probePageSize}: reading pages of ${found.size}`
      : `reading pages of ${found.size} (the site ${found.how === 'capped' ? 'caps larger ones' : `accepts ${probePageSize}`})`,
  );
  await ctx.mutex.run(async () =>
    (await ctx.warehouse.openLoad()).commit({
      runId: ctx.runId,
      extractedAt: ctx.extractedAt,
      state: { stream: probeStream, value: { ...state, pageSize: found.size, pageSizeFound: found.how } },
    }),
  );
  return found.size;
}

function readProbe(body: unknown): { size: number; how: PageSizeFinding } | null {
  if (!isJsonObject(body) || !Array.isArray(body.results)) return null;
  const n = body.results.length;
  if (n >= probePageSize) return { size: probePageSize, how: 'honoured' };
  if (typeof body.next === 'string' && body.next !== '') return n > 0 ? { size: n, how: 'capped' } : null;
  return { size: probePageSize, how: 'one page' };
}
