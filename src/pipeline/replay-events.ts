import { readRawLines, type RawLine } from '../extract/raw-landing.ts';
import { landedReportFileRecords } from '../extract/report-file.ts';
import { RowBatcher, type BatchContext, type RowBatch, type SinkCounts } from '../extract/row-batcher.ts';
import type { DeletionHolds } from '../extract/deletion-holds.ts';
import type { StreamDef } from '../streams/stream-def.ts';
import { objectBodyRecords, parseListPage, parseJson, unseenRecords } from '../source/index.ts';
import type { JsonObject } from '../util/json.ts';
import { GrantflowError } from '../util/errors.ts';

/**
 * What replaying one stream's raw pages asks of the warehouse, in order: stage these rows; commit what is staged.
 * Produced without touching the warehouse, so a worker thread can produce them while the main thread loads.
 */
export type ReplayEvent =
  | { readonly kind: 'rows'; readonly batch: RowBatch }
  /** Drop what is staged since the last commit: an attempt that was killed before committing it. */
  | { readonly kind: 'discard' }
  | {
      readonly kind: 'commit';
      /** Top-level stream: the landed walk was complete, so its deletions may be inferred. */
      readonly complete: boolean;
      /** Fan-out stream: parents whose walks were complete in this chunk (their children's deletions). */
      readonly parentIds: readonly number[];
      /** What the commit's deletions must spare (records seen but not loaded, lists not sent). */
      readonly holds: DeletionHolds;
      /** What this commit covers (not cumulative). */
      readonly counts: SinkCounts;
      readonly pages: number;
      readonly duplicates: number;
    };

/** Parents per commit of a fan-out stream: bounds what is staged at once, as checkpoints do in a sync. */
export const parentsPerCommit = 2000;

export function replayEvents(dir: string, def: StreamDef, ctx: BatchContext): AsyncGenerator<ReplayEvent> {
  return def.parent ? fanOutEvents(dir, def, ctx) : topLevelEvents(dir, def, ctx);
}

const rowsOf = (batches: readonly RowBatch[]): ReplayEvent[] => batches.map((batch) => ({ kind: 'rows', batch }));

/** A top-level stream: one commit, with deletions only when the landed walk was complete (as in a sync). */
async function* topLevelEvents(dir: string, def: StreamDef, ctx: BatchContext): AsyncGenerator<ReplayEvent> {
  let batcher = new RowBatcher(def.name, ctx);
  let keys = new Set<string>();
  let tally = { pages: 0, duplicates: 0 };
  let complete = false;
  let open = false;
  for await (const line of readRawLines(dir, def.name, { partEnds: true })) {
    if (line.type === 'part_end') {
      // A later part is a resumed attempt that walked the list again: an open walk here was never committed.
      if (open) {
        yield { kind: 'discard' };
        batcher = new RowBatcher(def.name, ctx);
        keys = new Set<string>();
        tally = { pages: 0, duplicates: 0 };
        open = false;
      }
      continue;
    }
    if (line.type === 'walk_end') {
      complete = line.complete;
      open = false;
      continue;
    }
    open = true;
    tally.pages++;
    yield* rowsOf(batcher.add(fresh(def, pageRecords(def.shape, line), keys, tally, line.confirming)));
  }
  yield* rowsOf(batcher.drain());
  yield { kind: 'commit', complete, parentIds: [], holds: batcher.holds(), counts: batcher.counts, ...tally };
}

/**
 * A fan-out stream: a parent's pages may interleave with other parents' in the file, so its records wait for its
 * `walk_end`; then they join the current chunk with that parent's deletion scope. A chunk never splits a parent.
 */
async function* fanOutEvents(dir: string, def: StreamDef, ctx: BatchContext): AsyncGenerator<ReplayEvent> {
  const waiting = new Map<number, { records: JsonObject[]; keys: Set<string> }>();
  let batcher = new RowBatcher(def.name, ctx);
  let tally = { pages: 0, duplicates: 0 };
  let chunk: number[] = [];

  function* commit(): Generator<ReplayEvent> {
    yield* rowsOf(batcher.drain());
    yield {
      kind: 'commit',
      complete: true,
      parentIds: chunk,
      holds: batcher.holds(),
      counts: batcher.counts,
      ...tally,
    };
    batcher = new RowBatcher(def.name, ctx);
    tally = { pages: 0, duplicates: 0 };
    chunk = [];
  }
  function* finish(parentId: number, records: JsonObject[], complete: boolean): Generator<ReplayEvent> {
    yield* rowsOf(batcher.add(records, parentId));
    if (complete) chunk.push(parentId);
    if (chunk.length >= parentsPerCommit) yield* commit();
  }

  for await (const line of readRawLines(dir, def.name, { partEnds: true })) {
    // Parents a killed attempt left open were never committed; the resumed attempt walked them again.
    if (line.type === 'part_end') {
      waiting.clear();
      continue;
    }
    const parentId = line.parentId;
    if (parentId === undefined) continue;
    const entry = waiting.get(parentId) ?? { records: [], keys: new Set<string>() };
    waiting.set(parentId, entry);
    if (line.type === 'page') {
      tally.pages++;
      entry.records.push(...fresh(def, pageRecords(def.shape, line), entry.keys, tally, line.confirming));
      // An object endpoint (eligibility) or a download answers in one page: that page is the whole walk.
      if (def.shape !== 'list') {
        waiting.delete(parentId);
        yield* finish(parentId, entry.records, true);
      }
      continue;
    }
    waiting.delete(parentId);
    yield* finish(parentId, entry.records, line.complete);
  }
  // Parents whose walk a kill cut short: their rows load, but nothing of theirs is inferred deleted.
  for (const [parentId, entry] of waiting) yield* finish(parentId, entry.records, false);
  yield* commit();
}

/**
 * Records of a page not seen before in the same walk, counting the repeats; a confirming walk (the second, see
 * confirmWalk) sees the first walk's records again by design, so its repeats are not counted.
 */
function fresh(
  def: StreamDef,
  records: JsonObject[],
  seen: Set<string>,
  tally: { duplicates: number },
  confirming = false,
): JsonObject[] {
  const { fresh, repeated } = unseenRecords(records, def.keyOf, seen);
  if (!confirming) tally.duplicates += repeated;
  return fresh;
}

function pageRecords(shape: StreamDef['shape'], line: Extract<RawLine, { type: 'page' }>): JsonObject[] {
  const { body, url } = line;
  if (shape === 'download') return landedReportFileRecords(line);
  if (shape === 'object') {
    const parsed = parseJson(body);
    if (!parsed.ok) throw new GrantflowError(`raw page of ${url} is not JSON: ${parsed.problem}`);
    return objectBodyRecords(parsed.value);
  }
  const parsed = parseListPage(body);
  if (!parsed.ok) throw new GrantflowError(`raw page of ${url} cannot be read: ${parsed.problem}`);
  return parsed.value.records;
}
