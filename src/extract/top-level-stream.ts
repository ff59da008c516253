import type { JsonObject } from '../util/json.ts';

import type { PaginationInfo } from '../source/types.ts';

import { SiteHttpError } from '../source/index.ts';

import type { CommitPlan } from '../warehouse/types.ts';

import { CredentialsError, StoppedError } from '../util/errors.ts';

import { confirmWalk } from './confirm-walk.ts';

import { flushBeforeCommit, pageLine } from './raw-landing.ts';

import { RowSink } from './row-sink.ts';

import { addDeletions, scanDeletions } from './deletions.ts';

import type { StreamDef } from '../streams/stream-def.ts';

import {
  addSinkCounts,
  emptyInfo,
  pageQuery,
  type ExtractContext,
  type ParentRef,
  type StreamInfo,
  type StreamState,
} from './types.ts';

import { readStreamState } from './state.ts';
import { deeperThan, maxRecordDepth } from '../normalize/index.ts';
import { cutError, walkCut, type WalkCut } from './walk-limits.ts';

export interface TopLevelResult {
  readonly info: StreamInfo;
  /** Ids and markers of every record seen, when fan-out streams hang off this one; null if the stream did not run. */
  readonly parents: ParentRef[] | null;
  /** The parent list is the whole list (children of parents missing from it may be dropped). */
  readonly parentsComplete: boolean;
}

/**
 * Reads one top-level list and loads it in ONE transaction with its deletions and new state: a crash before the
 * commit leaves the stream as it was, and a rerun fetches it again (top-level lists are cheap). A walk the time budget
 * or the stream's time limit cuts (see walk-limits.ts) commits what it read, deletes nothing, and keeps where it
 * stopped (`resumeUrl`): the next run continues from there, and that walk is not complete either (it did not see the
 * pages before), so nothing is deleted until a walk from the first page reaches the end.
 */
export async function runTopLevelStream(
  def: StreamDef,
  ctx: ExtractContext,
  parentMarker: ((record: JsonObject) => string | null) | null,
): Promise<TopLevelResult> {
  const started = Date.now();
  const info = emptyInfo(def.name);
  const stream = def.name;
  const state = await readStreamState(ctx, def.name);

  if (ctx.resuming && state.lastCompleteRunId === ctx.runId) {
    info.status = 'already_done';
    info.reason = 'committed earlier in this run (resumed)';
    ctx.progress.finish(def.name, 'already committed in this run');
    return {
      info,
      parents: parentMarker ? await parentsFromWarehouse(def, ctx, parentMarker) : null,
      parentsComplete: true,
    };
  }

  const unit = await ctx.mutex.run(() => ctx.warehouse.openLoad());
  const sink = new RowSink(stream, unit, { ...ctx, siteTimeZone: ctx.options.siteTimeZone });
  const parents: ParentRef[] = [];
  const append = def.mode === 'append_newest_first';
  let stoppedEarly = false;
  let descending = true;
  let repeats = 0;
  let lastId = Number.POSITIVE_INFINITY;
  let maxId = state.maxId ?? null;
  let walk: PaginationInfo | null = null;
  let cut: WalkCut | null = null;
  let resumeUrl: string | null = null;
  const resumeFrom = resumePoint(state, ctx);
  const seen = new Set<string>();
  let confirmed = true;
  /** Ids of records loaded under an integer id that no request can name exactly (integer text beyond 2^53). */
  const unreadParents: string[] = [];
  const addParents = (records: readonly JsonObject[]): void => {
    if (!parentMarker) return;
    for (const r of records) {
      // Quarantined by the sink (its marker could not even be computed): its children are not read.
      if (deeperThan(r, maxRecordDepth)) continue;
      const id = recordId(r);
      if (id !== undefined) parents.push({ id, marker: parentMarker(r) });
      else if (typeof r.id === 'string' && integerText.test(r.id)) unreadParents.push(r.id.trim());
    }
  };

  try {
    const pages = ctx.client.paginate(resumeFrom ?? def.path, { keyOf: def.keyOf, ...pageQuery(ctx) });
    for (;;) {
      const step = await pages.next();
      if (step.done) {
        walk = step.value;
        break;
      }
      const page = step.value;
      info.pages++;
      ctx.raw?.write(def.name, pageLine(page));
      ctx.progress.page(def.name, page.records.length, page.total);
      for (const r of page.records) seen.add(def.keyOf(r));
      addParents(page.records);
      await sink.addRecords(page.records);

      repeats += page.repeated;
      if (append) {
        // Stop once a whole page is already held, but only while the newest-first order is verified.
        let allHeld = page.records.length > 0;
        for (const r of page.records) {
          const id = recordId(r) ?? NaN;
          if (!(id < lastId)) descending = false;
          lastId = id;
          if (!(state.maxId !== undefined && id <= state.maxId)) allHeld = false;
          if (Number.isFinite(id)) maxId = Math.max(maxId ?? id, id);
        }
        // --full-refresh reads an append-only list whole, to fill any gap an earlier walk left.
        if (allHeld && descending && !ctx.options.fullRefreshStreams.has(def.name)) {
          stoppedEarly = true;
          await pages.return(undefined as unknown as PaginationInfo);
          break;
        }
      }
      cut = page.next === null ? null : walkCut(ctx, started);
      if (cut) {
        resumeUrl = new URL(page.next!, page.url).href;
        await pages.return(undefined as unknown as PaginationInfo);
        break;
      }
    }
    await sink.flush();
    // One page is one consistent read; across pages, rows this walk would delete are confirmed by a second walk.
    const scopes = scanDeletions(ctx.catalog, def, sink.holds()).completeScopes;
    if (walk?.complete && !resumeFrom && !stoppedEarly && walk.pages > 1 && scopes.length > 0) {
      const candidates = await ctx.mutex.run(() => unit.deletionCandidates(scopes));
      if (candidates.any) {
        confirmed = await confirmWalk(def, def.path, seen, ctx, info, async (missed) => {
          addParents(missed);
          await sink.addRecords(missed);
        });
        await sink.flush();
      }
    }
  } catch (error) {
    await ctx.mutex.run(() => unit.discard());
    return { info: failOrSkip(def, info, error, started, ctx), parents: null, parentsComplete: false };
  }

  addSinkCounts(info, sink.counts); // the stream's one commit
  info.duplicates = repeats; // the walk's own count, also when it stopped early
  if (unreadParents.length > 0) {
    // The fan-out carries parent ids as JavaScript numbers: said, not skipped in silence.
    info.parentsUnread = unreadParents.length;
    ctx.logger.warn(
      { stream: def.name, records: unreadParents.length, example: unreadParents[0] },
      'records whose id is beyond 2^53 were loaded, but their children cannot be requested and were not read',
    );
  }
  // Against the distinct records read: a repeated page's duplicates must not make up for records never read.
  if (walk && walk.totalReported !== null && walk.countMismatch) {
    info.countMismatch = { reported: walk.totalReported, read: walk.records };
  }
  info.complete = Boolean(walk?.complete) && !resumeFrom && !stoppedEarly && confirmed;
  if (walk?.stopReason === 'page_cap' || walk?.stopReason === 'count_cap')
    info.reason = `stopped after ${walk.pages} pages, far more than ${walk.stopReason === 'count_cap' ? `the site's count of ${walk.totalReported ?? 0} records needs` : 'any list needs'}: no deletions inferred`;
  if (stoppedEarly) info.caughtUp = true;
  // Soft deletion only from a complete scan of a list whose rows can vanish; logs are append-only. Rows of records
  // the walk saw but could not load stay (holds); a quarantined item without a usable id (not an object, say) may
  // stand where any held record is, so a walk with one deletes nothing; its walk_end says so, and a replay of its
  // pages (which finds the same holds) deletes nothing either.
  const holds = sink.holds();
  const deletes = info.complete && !holds.everything;
  ctx.raw?.write(def.name, { type: 'walk_end', complete: deletes });

  // An append-only list's high-water mark moves only after a walk that read everything down to the records already
  // held (or the whole list): past a gap, later runs would stop above it and never read it. A walk that met records
  // again may have had a page repeated instead of read; it keeps the old mark, so the next run reads that far again.
  const newMaxId = info.complete || (stoppedEarly && repeats === 0) ? maxId : (state.maxId ?? null);
  const { resumeUrl: _resumed, ...kept } = state;
  // Cut short: not done in this run (a resumed run reads on from resumeUrl), and the high-water mark stays.
  const newState: StreamState = cut
    ? { ...kept, resumeUrl: resumeUrl! }
    : {
        ...kept,
        lastCompleteRunId: ctx.runId,
        lastCompleteAt: ctx.extractedAt,
        records: info.records,
        ...(newMaxId !== null ? { maxId: newMaxId } : {}),
      };
  const plan: CommitPlan = {
    runId: ctx.runId,
    extractedAt: ctx.extractedAt,
    ...(deletes ? scanDeletions(ctx.catalog, def, holds) : {}),
    state: { stream: def.name, value: { ...newState } },
  };
  await flushBeforeCommit(ctx.raw, def.name, () => ctx.mutex.run(() => unit.discard()));
  const committed = await ctx.mutex.run(() => unit.commit(plan));
  addDeletions(ctx.catalog, info, def, committed);
  info.durationMs = Date.now() - started;
  if (cut) {
    const error = cutError(
      ctx,
      cut,
      `${info.pages} pages committed; the next sync continues the list where it stopped`,
    );
    failOrSkip(def, info, error, started, ctx);
  } else {
    ctx.progress.finish(def.name, `${info.records} records${info.deleted ? `, ${info.deleted} deleted` : ''}`);
  }
  // A walk that began where an earlier one stopped saw only the list's tail: the children of the records before it
  // come from the warehouse, which holds them all.
  const allParents = parentMarker && resumeFrom ? await parentsFromWarehouse(def, ctx, parentMarker) : parents;
  return { info, parents: parentMarker ? allParents : null, parentsComplete: info.complete };
}

/** Where an earlier walk of the stream stopped, when it is on the site (a site that moved starts over). */
function resumePoint(state: StreamState, ctx: ExtractContext): string | null {
  if (state.resumeUrl === undefined) return null;
  const site = new URL(ctx.client.baseUrl).origin;
  if (URL.canParse(state.resumeUrl) && new URL(state.resumeUrl).origin === site) return state.resumeUrl;
  ctx.logger.warn('a list walk stopped by a time limit was on another site address: reading it from its start');
  return null;
}

/** Turns an error of one stream into its info: a "not available here" status skips, anything else fails it. */
export function failOrSkip(
  def: StreamDef,
  info: StreamInfo,
  error: unknown,
  started: number,
  ctx: ExtractContext,
): StreamInfo {
  if (error instanceof CredentialsError) throw error;
  info.durationMs = Date.now() - started;
  if (error instanceof SiteHttpError && (error.status === 403 || error.status === 404)) {
    const reason = def.skipOn?.[error.status];
    if (reason) {
      info.status = 'skipped';
      info.reason = `${error.status}: ${reason}`;
      ctx.logger.warn({ stream: def.name, status: error.status }, `stream skipped: ${reason}`);
      ctx.progress.finish(def.name, `skipped (${reason})`, 'skipped');
      return info;
    }
  }
  info.status = 'failed';
  info.reason = error instanceof Error ? error.message : String(error);
  if (error instanceof StoppedError) {
    // The run is stopping (the sync reports why): not a failure of this stream worth an error of its own.
    info.status = 'interrupted';
    ctx.progress.finish(def.name, info.reason, 'interrupted');
    return info;
  }
  ctx.logger.error({ stream: def.name, err: info.reason }, 'stream failed');
  ctx.progress.finish(def.name, info.reason, 'failed');
  return info;
}

/**
 * The integer id of a list record, as a number or as integer text ("12": the normaliser loads such a record under
 * id 12, so its children must be read too); undefined when there is none a URL can name exactly.
 */
function recordId(r: JsonObject): number | undefined {
  const v = r.id;
  const n = typeof v === 'number' ? v : typeof v === 'string' && integerText.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

const integerText = /^\s*-?\d+\s*$/;

/** When a parent stream was committed earlier in a resumed run, its parents come from the warehouse. */
async function parentsFromWarehouse(
  def: StreamDef,
  ctx: ExtractContext,
  marker: (record: JsonObject) => string | null,
): Promise<ParentRef[]> {
  const table = ctx.catalog.mappingOf(def.name).owns[0]?.table ?? def.name;
  const rows = await ctx.mutex.run(() =>
    ctx.warehouse.query(`SELECT _raw FROM ${table} WHERE _deleted_at IS NULL AND NOT _ref_only`),
  );
  return rows.map((r) => {
    const record = JSON.parse(String(r._raw)) as JsonObject;
    return { id: Number(record.id), marker: marker(record) };
  });
}
