import type { JsonObject } from '../util/json.ts';
import { unseenRecords } from '../source/index.ts';
import { pageLine } from './raw-landing.ts';
import type { StreamDef } from '../streams/stream-def.ts';
import { pageQuery, type ExtractContext, type StreamInfo } from './types.ts';

/**
 * Walks a list a second time when its first walk would soft-delete rows. With numbered pages, a record deleted on a
 * page already read moves every record behind it one place forward, so the first record of the next page is never
 * seen, and a complete-looking walk would delete it although it lives. The second walk passes on only records the
 * first did not see (`seen`, by stream key), so the deletions apply to what both walks missed. Its pages are landed
 * raw like the first walk's, so a replay stages the same union. Returns whether the second walk was complete too:
 * if not, nothing may be deleted.
 */
export async function confirmWalk(
  def: StreamDef,
  path: string,
  seen: Set<string>,
  ctx: ExtractContext,
  info: StreamInfo,
  missed: (records: JsonObject[]) => Promise<void>,
  parentId?: number,
): Promise<boolean> {
  const pages = ctx.client.paginate(path, { keyOf: def.keyOf, ...pageQuery(ctx) });
  for (;;) {
    const step = await pages.next();
    if (step.done) return step.value.complete;
    const page = step.value;
    info.pages++;
    ctx.raw?.write(def.name, pageLine(page, { ...(parentId !== undefined ? { parentId } : {}), confirming: true }));
    const { fresh } = unseenRecords(page.records, def.keyOf, seen);
    if (fresh.length > 0) await missed(fresh);
  }
}
