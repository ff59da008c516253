import type { JsonObject } from '../util/json.ts';
import { objectBodyRecords, SiteHttpError } from '../source/index.ts';
import type { CommitPlan, LoadUnit, ParentMark } from '../warehouse/types.ts';
import { confirmWalk } from './confirm-walk.ts';
import { flushBeforeCommit, pageLine } from './raw-landing.ts';
import { reportFileLanding } from './report-file.ts';
import { reportFileContext } from '../streams/report-file-marker.ts';
import { GrantflowError } from '../util/errors.ts';
import type { PaginationInfo } from '../source/types.ts';
import { cutError, walkCut } from './walk-limits.ts';
import { RowSink } from './row-sink.ts';
import { addDeletions, parentDeletions } from './deletions.ts';
import type { StreamDef } from '../streams/stream-def.ts';
import { failOrSkip } from './top-level-stream.ts';
import { readStreamState } from './state.ts';
import {
  addSinkCounts,
  emptyInfo,
  pageQuery,
  type ExtractContext,
  type ExtractOptions,
  type ParentRef,
  type StreamInfo,
  type StreamState,
} from './types.ts';

/** The children of one parent, fetched and waiting for the next checkpoint. */
interface FetchedParent {
  readonly parent: ParentRef;
  readonly records: JsonObject[];
  /** All pages were read: children missing from them may be soft-deleted (see confirmWalk). */
  complete: boolean;
  /** Pages the walk read: one page is one consistent read; more may have missed records that moved. */
  readonly pages: number;
  /** A 404 that means "none" (notFoundMeansEmpty). */
  readonly notFound?: boolean;
  /** Characters of the pages (or file) read: what the records held until the checkpoint cost, roughly. */
  readonly chars: number;
  /** The walk was cut short by the time budget or the stream's time limit (not complete: no mark). */
  readonly cut?: boolean;
}

/**
 * A checkpoint is also due once the pages held reach this many characters: parsed records take a few times their
 * text, so this keeps a fan-out's held children to a few hundred MB whatever the site sends (notes pages of 60 MiB
 * each, held for 200 parents, took 4.6 GB before).
 */
export const checkpointChars = 32_000_000;

const dayMs = 86_400_000;

/** Whether the children held make a checkpoint due: by parents, by the characters of their pages, or by time. */
export function checkpointDue(
  options: Pick<ExtractContext['options'], 'checkpointParents' | 'checkpointSeconds' | 'checkpointChars'>,
  parents: number,
  chars: number,
  sinceMs: number,
): boolean {
  return (
    parents >= options.checkpointParents ||
    chars >= (options.checkpointChars ?? checkpointChars) ||
    sinceMs >= options.checkpointSeconds * 1000
  );
}

/**
 * Reads a per-parent endpoint for every parent that is new or changed (or every parent on a full refresh).
 * Children are committed in checkpoints together with the parents' change markers, so a killed run resumes
 * where it stopped and an unchanged parent costs no request.
 */
export async function runFanOutStream(
  def: StreamDef,
  parents: readonly ParentRef[],
  parentsComplete: boolean,
  ctx: ExtractContext,
): Promise<StreamInfo> {
  const started = Date.now();
  const info = emptyInfo(def.name);
  const state = await readStreamState(ctx, def.name);
  const marks = await ctx.mutex.run(() => ctx.warehouse.readParentMarks(def.name));
  const rolling = !def.refreshOnlyWhenAsked && ctx.options.fullRefreshMode === 'rolling';
  const fullRefresh = fullRefreshDue(def, state, ctx.options, ctx.extractedAt);
  const since = fullRefresh ? await fullRefreshSince(def, state, ctx) : undefined;
  const doneThisRun = ctx.resuming ? await parentsDoneInRun(ctx, def.name, since) : new Set<string>();
  const rollingDue = rolling && !fullRefresh ? await rollingRefresh(def, parents, ctx) : new Set<string>();

  // Parents with nothing to read yet (a report not generated) are listed by their own stream, not read.
  const idle = def.parent?.idleWithoutMarker ? parents.filter((p) => p.marker === null).length : 0;
  const todo = parents.filter((p) => {
    const key = String(p.id);
    if (def.parent?.idleWithoutMarker && p.marker === null) return false;
    if (doneThisRun.has(key)) return false;
    if (fullRefresh || !marks.has(key) || rollingDue.has(key)) return true;
    const stored = marks.get(key) ?? null;
    return !(def.parent?.unchanged ? def.parent.unchanged(stored, p.marker) : stored === p.marker);
  });
  const rolled = todo.filter((p) => {
    const key = String(p.id);
    if (!rollingDue.has(key)) return false;
    const stored = marks.get(key) ?? null;
    return def.parent?.unchanged ? def.parent.unchanged(stored, p.marker) : stored === p.marker;
  }).length;
  info.fullRefresh = fullRefresh;
  info.parents = {
    total: parents.length,
    fetched: 0,
    unchanged: parents.length - todo.length - idle,
    gone: 0,
    notFound: 0,
    ...(def.parent?.idleWithoutMarker ? { idle } : {}),
    ...(rolling && !fullRefresh ? { rolling: rolled } : {}),
  };
  ctx.progress.parents(def.name, 0, todo.length);

  let pending: FetchedParent[] = [];
  let pendingChars = 0;
  /** Walks the time budget or the stream's time limit cut short. */
  let cutWalks = 0;
  /** Parents whose children were not all read (a walk cut short): a full refresh missed them. */
  let unfinished = 0;
  /** Parents that answered 404 where that means "none" (eligibility): their marks, if the feature turns out off. */
  const notFound: string[] = [];
  let lastCheckpoint = Date.now();
  let committing: Promise<void> = Promise.resolve();
  let failure: unknown = null;
  let next = 0;

  const checkpoint = (): Promise<void> => {
    const batch = pending;
    pending = [];
    pendingChars = 0;
    lastCheckpoint = Date.now();
    // Checkpoints commit one after another while other parents keep fetching.
    committing = committing.then(async () => {
      unfinished += await commitParents(def, batch, ctx, info);
    });
    return committing;
  };

  const worker = async (): Promise<void> => {
    // Past the time budget no parent is started; those under way finish and are committed below.
    // Past the stream's own time limit neither.
    while (failure === null && next < todo.length && walkCut(ctx, started) === null) {
      const parent = todo[next++]!;
      try {
        const fetched = await fetchParent(def, parent, ctx, info, started);
        if (fetched) {
          pending.push(fetched);
          pendingChars += fetched.chars;
          if (fetched.cut) cutWalks++;
        } else info.parents!.gone++;
        if (fetched?.notFound) notFound.push(String(parent.id));
      } catch (error) {
        failure ??= error;
        return;
      }
      info.parents!.fetched++;
      ctx.progress.parents(def.name, info.parents!.fetched, todo.length);
      const due = checkpointDue(ctx.options, pending.length, pendingChars, Date.now() - lastCheckpoint);
      if (due) await checkpoint().catch((error: unknown) => void (failure ??= error));
    }
  };

  await Promise.all(Array.from({ length: Math.max(1, ctx.options.fanOutConcurrency) }, worker));
  const cut = walkCut(ctx, started);
  if (failure === null && cut !== null && (next < todo.length || cutWalks > 0)) {
    const left = todo.length - info.parents.fetched + cutWalks;
    failure = cutError(ctx, cut, `what was read is committed; the next sync reads the ${left} parents left`);
  }
  try {
    await checkpoint();
  } catch (error) {
    failure ??= error;
  }
  if (failure !== null) {
    // Checkpoints already committed stay: the next run resumes after them.
    // A full refresh cut short stays pending (see keepFullRefreshPending): the next run, a plain sync too, refreshes.
    return failOrSkip(def, info, failure, started, ctx);
  }

  // Final commit: the stream's state, and marks of parents that no longer exist (only after a complete parent scan).
  const seen = new Set(parents.map((p) => String(p.id)));
  const gone = parentsComplete ? [...marks.keys()].filter((id) => !seen.has(id)) : [];
  // Every parent answered 404: the feature is off, not "none anywhere". Unmarked, they are read again next run, so
  // turning the feature on shows at once instead of at the next full refresh.
  const featureOff = info.parents.fetched > 0 && info.parents.notFound === info.parents.fetched;
  // Only a refresh that read every parent whole counts; otherwise the next run refreshes again, so the parents it
  // missed do not wait another period.
  const refreshed = fullRefresh && parentsComplete && unfinished === 0;
  const { fullRefreshPending: _pending, fullRefreshSince: _since, ...kept } = state;
  const newState: StreamState = {
    ...kept,
    lastCompleteRunId: ctx.runId,
    lastCompleteAt: ctx.extractedAt,
    ...(refreshed ? { lastFullRefreshAt: ctx.extractedAt } : {}),
    ...(fullRefresh && !refreshed ? { fullRefreshPending: true, ...(since ? { fullRefreshSince: since } : {}) } : {}),
  };
  const plan: CommitPlan = {
    runId: ctx.runId,
    extractedAt: ctx.extractedAt,
    state: { stream: def.name, value: { ...newState } },
    dropParentMarks: { stream: def.name, parentIds: featureOff ? [...gone, ...notFound] : gone },
  };
  await ctx.mutex.run(async () => (await ctx.warehouse.openLoad()).commit(plan));
  info.complete = parentsComplete;
  info.durationMs = Date.now() - started;
  if (info.parents.fetched > 0 && info.parents.notFound === info.parents.fetched) {
    // One 404 means "this organization has none"; a 404 from every one means the feature is off.
    info.reason = `all ${info.parents.fetched} parents (${def.parent?.stream ?? 'parent'}) answered 404: probably not enabled on this site`;
  }
  ctx.progress.finish(
    def.name,
    `${info.records} records from ${info.parents.fetched} parents (${info.parents.unchanged} unchanged)`,
  );
  return info;
}

/**
 * Whether this run reads every parent of `def` again: asked (`--full-refresh`), left pending by a refresh cut short,
 * never done (a first sync, a reset), or due (`fullRefreshAfterDays`, unless the refresh is rolling or only asked).
 */
export function fullRefreshDue(
  def: StreamDef,
  state: StreamState,
  options: Pick<ExtractOptions, 'fullRefreshStreams' | 'fullRefreshAfterDays' | 'fullRefreshMode'>,
  at: string,
): boolean {
  const lastFull = state.lastFullRefreshAt ? Date.parse(state.lastFullRefreshAt) : NaN;
  const periodic = !def.refreshOnlyWhenAsked;
  const rolling = periodic && options.fullRefreshMode === 'rolling';
  return (
    options.fullRefreshStreams.has(def.name) ||
    state.fullRefreshPending === true ||
    !Number.isFinite(lastFull) ||
    (periodic && !rolling && Date.parse(at) - lastFull > options.fullRefreshAfterDays * dayMs)
  );
}

/**
 * Records, before a `--full-refresh` starts, that a full refresh of `def` is to do; the stream's final commit clears it
 * once a refresh read every parent whole. So a refresh cut short (the stream or its parent stream failed, the run was
 * killed or stopped and then resumed by a sync selecting other streams) is done by the next run, a plain sync too,
 * instead of leaving the parents it did not reach with child edits only a full refresh sees.
 */
export async function keepFullRefreshPending(def: StreamDef, ctx: ExtractContext): Promise<void> {
  try {
    const state = await readStreamState(ctx, def.name);
    if (state.fullRefreshPending === true) return;
    const plan: CommitPlan = {
      runId: ctx.runId,
      extractedAt: ctx.extractedAt,
      state: { stream: def.name, value: { ...state, fullRefreshPending: true } },
    };
    await ctx.mutex.run(async () => (await ctx.warehouse.openLoad()).commit(plan));
  } catch (error) {
    // The stream's own work will meet the same trouble and report it; a refresh it finishes needs no record.
    ctx.logger.warn(
      { stream: def.name, err: error instanceof Error ? error.message : String(error) },
      'could not record that a full refresh is under way',
    );
  }
}

async function fetchParent(
  def: StreamDef,
  parent: ParentRef,
  ctx: ExtractContext,
  info: StreamInfo,
  started: number,
): Promise<FetchedParent | null> {
  const path = def.path.replace('{parent}', String(parent.id));
  try {
    if (def.shape === 'download') return await fetchReportFile(def, path, parent, ctx, info);
    if (def.shape === 'object') {
      const res = await ctx.client.getJson(path);
      info.pages++;
      ctx.raw?.write(def.name, {
        type: 'page',
        url: res.url,
        status: res.status,
        fetchedAt: new Date().toISOString(),
        parentId: parent.id,
        body: res.raw,
      });
      ctx.progress.page(def.name, 1);
      const records = objectBodyRecords(res.body);
      return { parent, records, complete: true, pages: 1, chars: res.raw.length };
    }
    const records: JsonObject[] = [];
    let chars = 0;
    let walked = 0;
    const pages = ctx.client.paginate(path, { keyOf: def.keyOf, ...pageQuery(ctx) });
    for (;;) {
      const step = await pages.next();
      if (step.done) {
        info.duplicates += step.value.duplicates;
        // A walk of several pages may still be confirmed (confirmMultiPageWalks), which lands its end then.
        if (step.value.pages <= 1)
          ctx.raw?.write(def.name, { type: 'walk_end', parentId: parent.id, complete: step.value.complete });
        return { parent, records, complete: step.value.complete, pages: step.value.pages, chars };
      }
      info.pages++;
      const page = step.value;
      ctx.raw?.write(def.name, pageLine(page, { parentId: parent.id }));
      ctx.progress.page(def.name, page.records.length);
      records.push(...page.records);
      chars += page.body.length;
      walked++;
      if (page.next !== null && walkCut(ctx, started) !== null) {
        // Out of time with the parent's list under way: what it read is committed, unmarked, so the next run reads
        // this parent's children again from their first page.
        await pages.return(undefined as unknown as PaginationInfo);
        if (walked <= 1) ctx.raw?.write(def.name, { type: 'walk_end', parentId: parent.id, complete: false });
        return { parent, records, complete: false, pages: walked, chars, cut: true };
      }
    }
  } catch (error) {
    if (error instanceof SiteHttpError && error.status === 404) {
      if (def.notFoundMeansEmpty) {
        info.parents!.notFound++;
        ctx.raw?.write(def.name, { type: 'walk_end', parentId: parent.id, complete: true, empty: true });
        return { parent, records: [], complete: true, pages: 1, notFound: true, chars: 0 };
      }
      // The parent vanished between the list and this call: its own stream's next scan deletes it.
      return null;
    }
    throw error;
  }
}

/**
 * A report's file: landed whole and made the parent's one record. A format grantflow cannot read (not CSV) is said
 * (a warning, counted in the summary) and loads no rows; its file stays in the raw landing.
 */
async function fetchReportFile(
  def: StreamDef,
  path: string,
  parent: ParentRef,
  ctx: ExtractContext,
  info: StreamInfo,
): Promise<FetchedParent> {
  const context = reportFileContext(parent.marker);
  if (!context) throw new GrantflowError(`${def.name}: report ${parent.id} has no generation to download`);
  const file = await ctx.client.download(path);
  info.pages++;
  const { line, record, format } = reportFileLanding(parent.id, context, file);
  ctx.raw?.write(def.name, line);
  ctx.progress.page(def.name, 1);
  if (format.kind === 'other') {
    info.otherFormat = (info.otherFormat ?? 0) + 1;
    ctx.logger.warn(
      { stream: def.name, report: parent.id, format: format.what, bytes: file.bytes.length },
      ctx.raw
        ? `report ${parent.id}'s file is not CSV (${format.what}): no rows loaded; the file is kept in the raw landing (${ctx.raw.dir})`
        : `report ${parent.id}'s file is not CSV (${format.what}): no rows loaded, and not kept (--land-raw is off)`,
    );
  }
  return { parent, records: [record], complete: true, pages: 1, chars: file.bytes.length };
}

/** Commits a checkpoint's parents; returns how many of them were not read whole (no mark, no deletions). */
async function commitParents(
  def: StreamDef,
  batch: FetchedParent[],
  ctx: ExtractContext,
  info: StreamInfo,
): Promise<number> {
  if (batch.length === 0) return 0;
  const stream = def.name;
  const unit = await ctx.mutex.run(() => ctx.warehouse.openLoad());
  const sink = new RowSink(stream, unit, { ...ctx, siteTimeZone: ctx.options.siteTimeZone });
  try {
    for (const f of batch) await sink.addRecords(f.records, f.parent.id);
    await sink.flush();
    await confirmMultiPageWalks(def, batch, unit, sink, ctx, info);
  } catch (error) {
    await ctx.mutex.run(() => unit.discard());
    throw error;
  }
  const completeIds = batch.filter((f) => f.complete).map((f) => f.parent.id);
  // A parent with a quarantined child gets no mark, so the next run reads its children again instead of keeping
  // the stale row until the parent itself changes; its held rows stay live meanwhile.
  const quarantined = sink.parentsWithQuarantine();
  const marks: ParentMark[] = batch
    .filter((f) => f.complete && !quarantined.has(f.parent.id))
    .map((f) => ({ parentId: String(f.parent.id), marker: f.parent.marker }));
  const plan: CommitPlan = {
    runId: ctx.runId,
    extractedAt: ctx.extractedAt,
    completeScopes: parentDeletions(ctx.catalog, def, completeIds, sink.holds()),
    parentMarks: { stream: def.name, marks },
    // A mark from an earlier run may equal the parent's marker still: dropped, or the next run would skip it.
    ...(quarantined.size > 0 ? { dropParentMarks: { stream: def.name, parentIds: [...quarantined].map(String) } } : {}),
  };
  await flushBeforeCommit(ctx.raw, def.name, () => ctx.mutex.run(() => unit.discard()));
  const committed = await ctx.mutex.run(() => unit.commit(plan));
  addSinkCounts(info, sink.counts);
  addDeletions(ctx.catalog, info, def, committed);
  return batch.length - completeIds.length;
}

/**
 * Parents whose complete walk spanned pages and would soft-delete children are walked again (confirmWalk): what the
 * second walk finds is staged, and a parent whose second walk is cut short deletes nothing.
 */
async function confirmMultiPageWalks(
  def: StreamDef,
  batch: FetchedParent[],
  unit: LoadUnit,
  sink: RowSink,
  ctx: ExtractContext,
  info: StreamInfo,
): Promise<void> {
  const paged = batch.filter((f) => f.pages > 1);
  const complete = paged.filter((f) => f.complete);
  try {
    const scopes = parentDeletions(
      ctx.catalog,
      def,
      complete.map((f) => f.parent.id),
    );
    if (scopes.length === 0 || complete.length === 0) return;
    const candidates = new Set((await ctx.mutex.run(() => unit.deletionCandidates(scopes))).parentIds);
    for (const f of complete) {
      if (!candidates.has(String(f.parent.id))) continue;
      const seen = new Set(f.records.map((r) => def.keyOf(r)));
      const path = def.path.replace('{parent}', String(f.parent.id));
      try {
        f.complete = await confirmWalk(
          def,
          path,
          seen,
          ctx,
          info,
          (missed) => sink.addRecords(missed, f.parent.id),
          f.parent.id,
        );
      } catch (error) {
        // The parent went since its first walk: nothing of its children is deleted; its own stream's scan deletes it.
        if (!(error instanceof SiteHttpError && error.status === 404)) throw error;
        f.complete = false;
      }
    }
    await sink.flush();
  } catch (error) {
    // Nothing is committed: a replay must not delete from these walks either.
    for (const f of paged) f.complete = false;
    throw error;
  } finally {
    // Landed after any second walk, so a replay finishes the parent with what the sync decided.
    for (const f of paged) ctx.raw?.write(def.name, { type: 'walk_end', parentId: f.parent.id, complete: f.complete });
  }
}

/**
 * Parents whose children this run already committed (a resumed run does not read them again); during a full refresh
 * only those read `since` it began. A clock set back between attempts makes them look older: read again, not missed.
 */
async function parentsDoneInRun(ctx: ExtractContext, stream: string, since?: string): Promise<Set<string>> {
  const sql =
    'SELECT parent_id FROM _grantflow_parents WHERE stream = $1 AND run_id = $2' +
    (since === undefined ? '' : ' AND synced_at >= CAST($3 AS TIMESTAMPTZ)');
  const params = since === undefined ? [stream, ctx.runId] : [stream, ctx.runId, since];
  const rows = await ctx.mutex.run(() => ctx.warehouse.query(sql, params));
  return new Set(rows.map((r) => String(r.parent_id)));
}

/**
 * The parents a rolling refresh reads again this run, changed or not: the ceil(1/N) of the parents whose children
 * were read longest ago (N = fullRefreshAfterDays, one run taken as one day), and any read more than N days ago (runs
 * further apart than a day). So every run costs about the same, and a child edited without its parent changing is
 * read within N runs (or N days). Ties (every parent of a first sync was read at one time) go by parent id.
 */
async function rollingRefresh(
  def: StreamDef,
  parents: readonly ParentRef[],
  ctx: ExtractContext,
): Promise<Set<string>> {
  const days = ctx.options.fullRefreshAfterDays;
  const cutoff = new Date(Date.parse(ctx.extractedAt) - days * dayMs).toISOString();
  const rows = await ctx.mutex.run(() =>
    ctx.warehouse.query(
      'SELECT parent_id, synced_at < CAST($2 AS TIMESTAMPTZ) AS stale FROM _grantflow_parents WHERE stream = $1 ' +
        'ORDER BY synced_at, parent_id',
      [def.name, cutoff],
    ),
  );
  const current = new Set(parents.map((p) => String(p.id)));
  const quota = Math.ceil(current.size / Math.max(1, days));
  const due = new Set<string>();
  for (const r of rows) {
    const id = String(r.parent_id);
    if (!current.has(id)) continue;
    if (due.size < quota || r.stale === true) due.add(id);
    else break;
  }
  return due;
}

/**
 * When the full refresh of `def` began: kept in its state from the attempt that started it (committed now, so an
 * attempt killed after some checkpoints is resumed without reading them again) until a refresh reads every parent.
 * Undefined when this run's refresh already read every parent (an attempt killed after the stream finished): all the
 * parents this run read were read by the refresh, so none is read again.
 */
async function fullRefreshSince(def: StreamDef, state: StreamState, ctx: ExtractContext): Promise<string | undefined> {
  if (state.fullRefreshSince !== undefined) return state.fullRefreshSince;
  if (state.lastCompleteRunId === ctx.runId && state.lastFullRefreshAt === state.lastCompleteAt) return undefined;
  const plan: CommitPlan = {
    runId: ctx.runId,
    extractedAt: ctx.extractedAt,
    state: { stream: def.name, value: { ...state, fullRefreshSince: ctx.extractedAt } },
  };
  await ctx.mutex.run(async () => (await ctx.warehouse.openLoad()).commit(plan));
  return ctx.extractedAt;
}
