import { enumLabelRows } from '../normalize/index.ts';
import { stopReason } from '../util/errors.ts';
import { keepFullRefreshPending, runFanOutStream } from './fan-out-stream.ts';
import type { Mutex } from './mutex.ts';
import { refreshReports } from './report-refresh.ts';
import type { ReportRefreshOutcome } from './report-refresh-types.ts';
import type { Warehouse } from '../warehouse/types.ts';
import type { StreamDef } from '../streams/stream-def.ts';
import { failOrSkip, runTopLevelStream } from './top-level-stream.ts';
import { emptyInfo, type ExtractContext, type StreamInfo } from './types.ts';

/**
 * Runs the selected streams concurrently under the client's one throttle. Each fan-out stream starts as soon as
 * its parent's list is committed. A failing stream does not stop the others; credential errors stop the run.
 */
export async function runExtract(ctx: ExtractContext, streams: readonly StreamDef[]): Promise<StreamInfo[]> {
  await loadEnumLabels(ctx.warehouse, ctx.mutex, { runId: ctx.runId, extractedAt: ctx.extractedAt });
  for (const s of streams)
    if (s.parent && ctx.options.fullRefreshStreams.has(s.name)) await keepFullRefreshPending(s, ctx);
  const children = new Map<string, StreamDef[]>();
  for (const s of streams) {
    if (!s.parent) continue;
    const list = children.get(s.parent.stream) ?? [];
    list.push(s);
    children.set(s.parent.stream, list);
  }

  const results: StreamInfo[] = [];
  /** An error that ends the run: the other streams wind down (see ExtractContext.stop) and are reported with it. */
  const fatal = (def: StreamDef, error: unknown): StreamInfo => {
    if (!ctx.stop) throw error;
    if (!ctx.stop.signal.aborted) ctx.stop.abort(error);
    return {
      ...emptyInfo(def.name),
      status: 'failed',
      reason: error instanceof Error ? error.message : String(error),
    };
  };
  ctx.progress.start();
  try {
    await Promise.all(
      streams
        .filter((s) => !s.parent)
        .map(async (def) => {
          const kids = children.get(def.name) ?? [];
          // All children of one parent stream share its marker (the catalog keeps them equal).
          const marker = kids[0]?.parent?.marker ?? null;
          let top;
          if (ctx.budget?.aborted) {
            // Out of time before this list began: it and its children wait for the next run.
            for (const d of [def, ...kids])
              results.push(failOrSkip(d, emptyInfo(d.name), stopReason(ctx.budget), Date.now(), ctx));
            return;
          }
          try {
            const jobs = await refreshBefore(def, ctx);
            top = await runTopLevelStream(def, ctx, marker);
            if (jobs) top.info.reportJobs = jobs;
          } catch (error) {
            results.push(fatal(def, error));
            for (const kid of kids) results.push(fatal(kid, error));
            return;
          }
          results.push(top.info);
          if (kids.length === 0) return;
          if (top.parents === null) {
            for (const kid of kids) {
              results.push({
                ...top.info,
                stream: kid.name,
                status: top.info.status === 'failed' || top.info.status === 'interrupted' ? top.info.status : 'skipped',
                reason: `parent stream ${def.name} did not run: ${top.info.reason ?? top.info.status}`,
                pages: 0,
                records: 0,
                rows: 0,
              });
            }
            return;
          }
          const parents = top.parents;
          const kidInfos = await Promise.all(
            kids.map((kid) =>
              runFanOutStream(kid, parents, top.parentsComplete, ctx).catch((error: unknown) => fatal(kid, error)),
            ),
          );
          results.push(...kidInfos);
        }),
    );
  } finally {
    ctx.progress.stop(ctx.stop?.signal.aborted === true);
  }
  const order = new Map<string, number>(ctx.catalog.names.map((name, i) => [name, i]));
  return results.sort((a, b) => (order.get(a.stream) ?? 0) - (order.get(b.stream) ?? 0));
}

/** With `refreshReports`, the chosen reports are generated before the reports list is read (see report-refresh). */
function refreshBefore(def: StreamDef, ctx: ExtractContext): Promise<ReportRefreshOutcome | null> {
  const options = ctx.options.refreshReports;
  return def.name === 'reports' && options ? refreshReports(ctx, options) : Promise.resolve(null);
}

/** Labels of every enumeration, loaded by each run and replay (they change only with grantflow itself). */
export async function loadEnumLabels(
  warehouse: Warehouse,
  mutex: Mutex,
  plan: { runId: string; extractedAt: string },
): Promise<void> {
  await mutex.run(async () => {
    const unit = await warehouse.openLoad();
    await unit.append('enum_labels', enumLabelRows());
    await unit.commit(plan);
  });
}
