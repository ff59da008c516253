import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import { listRawStreams, readRawLines } from '../extract/raw-landing.ts';
import { Mutex } from '../extract/mutex.ts';
import { RowSink } from '../extract/row-sink.ts';
import { deletedRows, parentDeletions, scanDeletions } from '../extract/deletions.ts';
import { streamByName, streamCatalog } from '../extract/streams/index.ts';
import type { StreamDef } from '../extract/stream-def.ts';
import { emptyInfo, type StreamInfo } from '../extract/types.ts';
import { tables } from '../normalize/index.ts';
import { loadEnumLabels } from '../extract/extract-run.ts';
import { parseListPage, parseJson } from '../source/index.ts';
import type { Warehouse } from '../warehouse/types.ts';
import { isJsonObject, type JsonObject } from '../util/json.ts';
import { ConfigError, GrantflowError } from '../util/errors.ts';

export interface ReplayRequest {
  readonly warehouse: Warehouse;
  readonly rawDir: string;
  readonly runId: string;
  readonly siteTimeZone: string;
}

/**
 * Normalises and loads the pages a run landed, without calling the site: for a load that failed after the pages
 * were fetched, for a changed mapping, and for benchmarks. Deletions are inferred only from walks the raw file says
 * were complete; parent markers are not written, so the next sync still checks every parent.
 */
export async function runReplay(request: ReplayRequest): Promise<StreamInfo[]> {
  const dir = join(request.rawDir, request.runId);
  try {
    await stat(dir);
  } catch {
    throw new ConfigError(`no raw pages for run ${request.runId} under ${request.rawDir} (looked for ${dir})`);
  }
  const { warehouse } = request;
  await warehouse.migrate(tables);
  const mutex = new Mutex();
  const extractedAt = new Date().toISOString();
  const ctx = { runId: request.runId, extractedAt, siteTimeZone: request.siteTimeZone };
  const present = new Set(await listRawStreams(dir));
  const infos: StreamInfo[] = [];

  await loadEnumLabels(warehouse, mutex, { runId: request.runId, extractedAt });

  const replayStream = async (def: StreamDef): Promise<void> => {
    const started = Date.now();
    const info = emptyInfo(def.name);
    const load = streamByName(def.name)?.parent ? replayFanOut : replayTopLevel;
    await load(def, { dir, warehouse, mutex, ctx, info });
    info.durationMs = Date.now() - started;
    infos.push(info);
  };
  // Two streams at a time: one normalises while the other's rows go into the warehouse (commits stay serial).
  // Merges of references are order-independent, so the order streams finish in does not change the result.
  const queue = streamCatalog.filter((s) => present.has(s.name));
  const worker = async (): Promise<void> => {
    for (let def = queue.shift(); def; def = queue.shift()) await replayStream(def);
  };
  await Promise.all([worker(), worker()]);
  const order = new Map<string, number>(streamCatalog.map((s, i) => [s.name, i]));
  infos.sort((a, b) => (order.get(a.stream) ?? 0) - (order.get(b.stream) ?? 0));
  return infos;
}

interface ReplayScope {
  readonly dir: string;
  readonly warehouse: Warehouse;
  readonly mutex: Mutex;
  readonly ctx: { runId: string; extractedAt: string; siteTimeZone: string };
  readonly info: StreamInfo;
}

/** Parents per commit of a fan-out stream: bounds what is staged at once, as checkpoints do in a sync. */
const parentsPerCommit = 2000;

/** A top-level stream: one transaction, deletions only when the landed walk was complete (as in a sync). */
async function replayTopLevel(def: StreamDef, scope: ReplayScope): Promise<void> {
  const { warehouse, mutex, ctx, info } = scope;
  const unit = await mutex.run(() => warehouse.openLoad());
  const sink = new RowSink(def.name, unit, ctx);
  const keys = new Set<string>();
  let complete = false;
  for await (const line of readRawLines(scope.dir, def.name)) {
    if (line.type === 'walk_end') {
      complete = line.complete;
      continue;
    }
    info.pages++;
    await sink.addRecords(fresh(def, pageRecords(def.shape, line.body, line.url), keys, info));
  }
  await sink.flush();
  const committed = await mutex.run(() =>
    unit.commit({
      runId: ctx.runId,
      extractedAt: ctx.extractedAt,
      ...(complete ? scanDeletions(def) : {}),
    }),
  );
  Object.assign(info, {
    records: sink.counts.records,
    rows: sink.counts.rows,
    quarantined: sink.counts.quarantined,
    complete,
  });
  info.deleted = deletedRows(committed);
}

/**
 * A fan-out stream: a parent's pages may interleave with other parents' in the file, so its records wait for its
 * `walk_end`; then they join the current chunk with that parent's deletion scope. A chunk never splits a parent.
 */
async function replayFanOut(def: StreamDef, scope: ReplayScope): Promise<void> {
  const { warehouse, mutex, ctx, info } = scope;
  const stream = def.name;
  const waiting = new Map<number, { records: JsonObject[]; keys: Set<string> }>();
  let unit = await mutex.run(() => warehouse.openLoad());
  let sink = new RowSink(stream, unit, ctx);
  let chunk: number[] = [];

  const commit = async (): Promise<void> => {
    await sink.flush();
    const parentIds = chunk;
    const committed = await mutex.run(() =>
      unit.commit({
        runId: ctx.runId,
        extractedAt: ctx.extractedAt,
        completeScopes: parentDeletions(def, parentIds),
      }),
    );
    info.records += sink.counts.records;
    info.rows += sink.counts.rows;
    info.quarantined += sink.counts.quarantined;
    info.deleted += deletedRows(committed);
    chunk = [];
    unit = await mutex.run(() => warehouse.openLoad());
    sink = new RowSink(stream, unit, ctx);
  };
  const finish = async (parentId: number, records: JsonObject[], complete: boolean): Promise<void> => {
    await sink.addRecords(records, parentId);
    if (complete) chunk.push(parentId);
    if (chunk.length >= parentsPerCommit) await commit();
  };

  for await (const line of readRawLines(scope.dir, def.name)) {
    const parentId = line.parentId;
    if (parentId === undefined) continue;
    const entry = waiting.get(parentId) ?? { records: [], keys: new Set<string>() };
    waiting.set(parentId, entry);
    if (line.type === 'page') {
      info.pages++;
      entry.records.push(...fresh(def, pageRecords(def.shape, line.body, line.url), entry.keys, info));
      // An object endpoint (eligibility) answers in one page: that page is the whole walk.
      if (def.shape === 'object') {
        waiting.delete(parentId);
        await finish(parentId, entry.records, true);
      }
      continue;
    }
    waiting.delete(parentId);
    await finish(parentId, entry.records, line.complete);
  }
  // Parents whose walk a kill cut short: their rows load, but nothing of theirs is inferred deleted.
  for (const [parentId, entry] of waiting) await finish(parentId, entry.records, false);
  await commit();
  await mutex.run(() => unit.discard());
  info.complete = true;
}

/** Records of a page not seen before in the same walk (pages shift while a site changes). */
function fresh(def: StreamDef, records: JsonObject[], keys: Set<string>, info: StreamInfo): JsonObject[] {
  const out: JsonObject[] = [];
  for (const r of records) {
    const k = def.keyOf(r);
    if (keys.has(k)) info.duplicates++;
    else {
      keys.add(k);
      out.push(r);
    }
  }
  return out;
}

function pageRecords(shape: 'list' | 'object', body: string, url: string): JsonObject[] {
  if (shape === 'object') {
    const parsed = parseJson(body);
    if (!parsed.ok) throw new GrantflowError(`raw page of ${url} is not JSON: ${parsed.problem}`);
    return isJsonObject(parsed.value) ? [parsed.value] : [];
  }
  const parsed = parseListPage(body);
  if (!parsed.ok) throw new GrantflowError(`raw page of ${url} cannot be read: ${parsed.problem}`);
  return parsed.value.records;
}
