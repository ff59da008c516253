import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import { listRawStreams, readRawLines } from '../extract/raw-landing.ts';
import { Mutex } from '../extract/mutex.ts';
import { RowSink } from '../extract/row-sink.ts';
import { streamByName, streamCatalog } from '../extract/streams/index.ts';
import { emptyInfo, type StreamInfo } from '../extract/types.ts';
import { enumLabelRows, streamMappings, tables, type StreamName } from '../normalize/index.ts';
import { parseListPage, parseJson } from '../source/index.ts';
import type { CommitPlan, Warehouse } from '../warehouse/types.ts';
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

  const labels = await warehouse.openLoad();
  await new RowSink('programs', labels, mutex, ctx).addRows('enum_labels', enumLabelRows());
  await labels.commit({ runId: request.runId, extractedAt });

  // Catalog order puts parents before their children.
  for (const def of streamCatalog.filter((s) => present.has(s.name))) {
    const started = Date.now();
    const info = emptyInfo(def.name);
    const stream = def.name as StreamName;
    const mapping = streamMappings[stream];
    const unit = await warehouse.openLoad();
    const sink = new RowSink(stream, unit, mutex, ctx);
    const seen = new Map<string, Set<string>>();
    const completeParents: number[] = [];
    let topComplete = false;
    for await (const line of readRawLines(dir, def.name)) {
      if (line.type === 'walk_end') {
        if (line.parentId === undefined) topComplete = line.complete;
        else if (line.complete) completeParents.push(line.parentId);
        continue;
      }
      info.pages++;
      const records = pageRecords(def.shape, line.body, line.url);
      const scope = String(line.parentId ?? '');
      let keys = seen.get(scope);
      if (!keys) seen.set(scope, (keys = new Set()));
      const fresh: JsonObject[] = [];
      for (const r of records) {
        const k = def.keyOf(r);
        if (keys.has(k)) info.duplicates++;
        else {
          keys.add(k);
          fresh.push(r);
        }
      }
      await sink.addRecords(fresh, line.parentId);
    }
    await sink.flush();
    const fanOut = Boolean(streamByName(def.name)?.parent);
    const scan = def.mode === 'scan';
    const plan: CommitPlan = {
      runId: request.runId,
      extractedAt,
      completeScopes: !scan
        ? []
        : fanOut
          ? mapping.owns
              .filter((o) => o.parentColumn)
              .map((o) => ({
                table: o.table,
                where: o.where,
                parentColumn: o.parentColumn,
                parentIds: completeParents,
              }))
          : topComplete
            ? mapping.owns.filter((o) => !o.parentColumn).map((o) => ({ table: o.table, where: o.where }))
            : [],
      cascades: scan && !fanOut && topComplete ? mapping.cascades : [],
    };
    const committed = await unit.commit(plan);
    info.records = sink.counts.records;
    info.rows = sink.counts.rows;
    info.quarantined = sink.counts.quarantined;
    info.complete = fanOut ? true : topComplete;
    info.deleted = Object.values(committed.deleted).reduce((a, b) => a + b, 0);
    info.durationMs = Date.now() - started;
    infos.push(info);
  }
  return infos;
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
