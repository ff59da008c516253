import { join } from 'node:path';

import { listRawStreams } from '../extract/raw-landing.ts';

import { Mutex } from '../extract/mutex.ts';

import { addDeletions, parentDeletions, scanDeletions } from '../extract/deletions.ts';

import type { StreamDef } from '../streams/stream-def.ts';

import { addSinkCounts, emptyInfo, type StreamInfo } from '../extract/types.ts';

import type { Promotion } from '../normalize/promotions.ts';

import { migrateWithPromotions } from './promote-step.ts';

import { loadEnumLabels } from '../extract/extract-run.ts';

import type { Warehouse } from '../warehouse/types.ts';

import { ConfigError } from '../util/errors.ts';

import { replayEvents, type ReplayEvent } from './replay-events.ts';

import { ReplayWorker } from './replay-worker-client.ts';
import type { StreamCatalog } from '../streams/catalog.ts';
import { defaultCatalog, isBuiltinStream } from '../streams/registry.ts';

/**
 * Streams replayed at once. Alternating medium runs: two → three lanes took Postgres 6.4 → 6.0–6.2 s (large 76 →
 * 58 s); three → four 6.26 → 5.88 s for Postgres and 5.31 → 5.13 s for DuckDB, at the same peak memory (with the
 * heap policy). Five made Postgres medium 5 % faster but large 58 → 63 s and 278 → 336 MB, DuckDB no faster.
 */
const lanes = 4;

export interface ReplayRequest {
  readonly warehouse: Warehouse;
  readonly rawDir: string;
  readonly runId: string;
  readonly siteTimeZone: string;
  /** The streams to know (default: the built-in ones), as the sync that landed the pages knew them. */
  readonly catalog?: StreamCatalog;
  /** Checked `promote` setting (promote-step.ts): its columns are added, filled for rows held and for rows loaded. */
  readonly promotions?: readonly Promotion[];
  /**
   * Parse and normalise in a worker thread while the main thread loads. Default: for DuckDB, whose Appender keeps
   * the main thread busy (medium measured ~12 % faster, ~30 MB more memory); not for Postgres, whose server's
   * share of the cores is the limit (measured no faster and ~90 MB more with a worker).
   */
  readonly normaliseInWorker?: boolean;
}

/**
 * Normalises and loads the pages a run landed, without calling the site: for a load that failed after the pages
 * were fetched, for a changed mapping, and for benchmarks. Deletions are inferred only from walks the raw file says
 * were complete; parent markers are not written, so the next sync still checks every parent.
 */
export async function runReplay(request: ReplayRequest): Promise<StreamInfo[]> {
  const catalog = request.catalog ?? defaultCatalog;
  const dir = await rawRunDir(request.rawDir, request.runId, catalog);
  const { warehouse } = request;
  const promotions = request.promotions ?? [];
  await migrateWithPromotions(warehouse, promotions, catalog);
  const mutex = new Mutex();
  const extractedAt = new Date().toISOString();
  const ctx = { catalog, runId: request.runId, extractedAt, siteTimeZone: request.siteTimeZone, promotions };
  const queue = await landedStreams(dir, catalog);
  const infos: StreamInfo[] = [];

  // The first failure is the one reported: a failing stream stops the shared worker, which then fails the others.
  const failures: unknown[] = [];
  // Normalising keeps a core busy: DuckDB, in this process, leaves it one (see whileBulkLoading).
  await warehouse.whileBulkLoading(async () => {
    await loadEnumLabels(warehouse, mutex, { runId: request.runId, extractedAt });

    const worker = (request.normaliseInWorker ?? warehouse.inProcess) ? new ReplayWorker() : null;
    const replayStream = async (def: StreamDef): Promise<void> => {
      const started = Date.now();
      const info = emptyInfo(def.name);
      // The worker thread knows the built-in streams only: one only the request's catalog knows normalises here.
      const events = worker && isBuiltinStream(def) ? worker.events(dir, def.name, ctx) : replayEvents(dir, def, ctx);
      await loadEvents(def, events, warehouse, mutex, ctx, info);
      info.durationMs = Date.now() - started;
      infos.push(info);
    };
    // Several streams at a time: while one waits for its merges and commit, the others' rows go into staging
    // (commits stay serial). Merges of references are order-independent, so the order streams finish in does not
    // matter.
    const lane = async (): Promise<void> => {
      for (let def = queue.shift(); def; def = queue.shift()) {
        try {
          await replayStream(def);
        } catch (error) {
          failures.push(error);
          queue.length = 0; // no new stream starts after a failure
          return;
        }
      }
    };
    // Every lane finishes before the failure is thrown: no stream is left loading after replay returns.
    await Promise.all(Array.from({ length: lanes }, () => lane()));
    await worker?.close();
  });
  if (failures.length > 0) throw failures[0];
  await warehouse.refreshStatistics();
  const order = new Map<string, number>(catalog.names.map((name, i) => [name, i]));
  infos.sort((a, b) => (order.get(a.stream) ?? 0) - (order.get(b.stream) ?? 0));
  return infos;
}

/** Where a run's raw pages are; a ConfigError if it landed none there (checked before a warehouse is opened). */
export async function rawRunDir(
  rawDir: string,
  runId: string,
  catalog: StreamCatalog = defaultCatalog,
): Promise<string> {
  // A run id is one folder's name: '', '.', '..' or a path would read the raw dir itself, a file or another folder.
  if (runId === '' || runId === '.' || runId === '..' || /[/\\]/.test(runId))
    throw new ConfigError(`--run must be a run id, the name of a folder under ${rawDir}; got "${runId}"`);
  const dir = join(rawDir, runId);
  let streams: StreamDef[];
  try {
    streams = await landedStreams(dir, catalog);
  } catch {
    throw new ConfigError(`no raw pages for run ${runId} under ${rawDir} (looked for ${dir})`);
  }
  // An empty folder would "replay" nothing and exit 0, as if the run's data were loaded.
  if (streams.length === 0)
    throw new ConfigError(`no raw pages for run ${runId} in ${dir} (no <stream>.jsonl.gz file of a known stream)`);
  return dir;
}

/** The streams whose raw pages a run landed under `dir`, in catalog order: what a replay loads. */
export async function landedStreams(dir: string, catalog: StreamCatalog): Promise<StreamDef[]> {
  const present = new Set(await listRawStreams(dir));
  return catalog.streams.filter((s) => present.has(s.name));
}

/**
 * Carries out one stream's replay events: rows into the current load unit's staging; each commit event commits it
 * with the deletions the event allows (a complete top-level walk; the complete parents of a fan-out chunk).
 */
async function loadEvents(
  def: StreamDef,
  events: AsyncIterable<ReplayEvent>,
  warehouse: Warehouse,
  mutex: Mutex,
  ctx: { catalog: StreamCatalog; runId: string; extractedAt: string },
  info: StreamInfo,
): Promise<void> {
  const fanOut = def.parent !== undefined;
  let unit = await mutex.run(() => warehouse.openLoad());
  try {
    for await (const event of events) {
      if (event.kind === 'rows') {
        await unit.append(event.batch.table, event.batch.rows, event.batch.merge);
        continue;
      }
      if (event.kind === 'discard') {
        await mutex.run(() => unit.discard());
        unit = await mutex.run(() => warehouse.openLoad());
        continue;
      }
      const deletions = fanOut
        ? { completeScopes: parentDeletions(ctx.catalog, def, event.parentIds, event.holds) }
        : event.complete
          ? scanDeletions(ctx.catalog, def, event.holds)
          : {};
      const committed = await mutex.run(() =>
        unit.commit({ runId: ctx.runId, extractedAt: ctx.extractedAt, ...deletions }),
      );
      info.pages += event.pages;
      info.duplicates += event.duplicates;
      addSinkCounts(info, event.counts);
      addDeletions(ctx.catalog, info, def, committed);
      info.complete = fanOut || event.complete;
      unit = await mutex.run(() => warehouse.openLoad());
    }
  } finally {
    await mutex.run(() => unit.discard());
  }
}
