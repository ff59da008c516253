import { fullRefreshDue } from '../extract/fan-out-stream.ts';
import { Progress, type FanOutExpectation } from '../extract/progress.ts';
import type { StreamDef } from '../streams/stream-def.ts';
import type { ExtractOptions, StreamState } from '../extract/types.ts';
import type { SiteClient } from '../source/types.ts';
import { isJsonObject, type JsonObject } from '../util/json.ts';
import type { Logger } from '../util/logger.ts';
import { warehouseFile } from '../config/settings.ts';
import type { RunRecord, Warehouse } from '../warehouse/types.ts';
import { liveProgressPublisher } from './live-progress-file.ts';

export interface RunProgressInput {
  readonly logger: Logger;
  readonly tty: boolean | undefined;
  /** The warehouse's target (a DuckDB file publishes the progress beside it) and the warehouse, for stream states. */
  readonly target: string;
  readonly warehouse: Warehouse;
  readonly runId: string;
  readonly client: SiteClient;
  /** The last run before this one: its pages per stream are the first estimate of this run's. */
  readonly last: RunRecord | undefined;
  readonly streams: readonly StreamDef[];
  /** What decides whether a fan-out stream reads every parent this run (see fullRefreshDue). */
  readonly options: Pick<ExtractOptions, 'fullRefreshStreams' | 'fullRefreshAfterDays' | 'fullRefreshMode'>;
  readonly extractedAt: string;
}

/**
 * The live progress of a sync: counts the client's requests and estimates the run's from what each stream will do.
 * A top-level list takes about the pages it took last run; a fan-out stream that reads every parent (a full refresh,
 * a first sync, a reset) takes its pages per parent times its parents, and one that reads only changed parents about
 * what it read last time it did so. (DuckDB, whose file the run holds) publishes itself beside the warehouse for
 * `status`.
 */
export async function runProgress(input: RunProgressInput): Promise<Progress> {
  const last = lastStreams(input.last);
  const expected = new Map<string, number>();
  const fanOut = new Map<string, FanOutExpectation>();
  const stopEarly = new Set<string>();
  for (const d of input.streams) {
    const before = last.get(d.name);
    const state = await streamState(input.warehouse, d.name);
    if (!d.parent) {
      const pages = before?.pages;
      if (typeof pages !== 'number') continue;
      if (d.mode !== 'append_newest_first') expected.set(d.name, pages);
      else {
        // An append-only log is read down to the records held (usually one page), or whole when asked or reset.
        const whole = input.options.fullRefreshStreams.has(d.name) || Object.keys(state).length === 0;
        if (!whole) stopEarly.add(d.name);
        const lastWhole = before?.caughtUp !== true;
        if (whole === lastWhole) expected.set(d.name, pages);
        else if (!whole) expected.set(d.name, 1);
      }
      continue;
    }
    const parents = isJsonObject(before?.parents) ? before.parents : undefined;
    const fetched = typeof parents?.fetched === 'number' ? parents.fetched : 0;
    const perParent = fetched > 0 && typeof before?.pages === 'number' ? before.pages / fetched : 1;
    const everyParent = fullRefreshDue(d, state, input.options, input.extractedAt);
    fanOut.set(d.name, { parent: d.parent.stream, everyParent, perParent });
    if (everyParent) {
      if (typeof parents?.total === 'number') expected.set(d.name, Math.ceil(parents.total * perParent));
    } else {
      // Changed parents only: about as many as the last run that also read only those, none after a full one.
      expected.set(d.name, before?.fullRefresh === true || typeof before?.pages !== 'number' ? 0 : before.pages);
    }
  }
  return new Progress(input.logger, input.tty, {
    requests: () => input.client.stats.requests,
    streams: input.streams.map((d) => d.name),
    expected,
    fanOut,
    stopEarly,
    ...(warehouseFile(input.target) === null ? {} : { publish: liveProgressPublisher(input.target, input.runId) }),
  });
}

/** The last run's line of each stream, by name. */
function lastStreams(run: RunRecord | undefined): Map<string, JsonObject> {
  const summary = run?.summary;
  const streams = isJsonObject(summary) && Array.isArray(summary.streams) ? summary.streams : [];
  const out = new Map<string, JsonObject>();
  for (const s of streams) if (isJsonObject(s) && typeof s.stream === 'string') out.set(s.stream, s);
  return out;
}

async function streamState(warehouse: Warehouse, stream: string): Promise<StreamState> {
  const value = await warehouse.readState(stream);
  return isJsonObject(value) ? (value as StreamState) : {};
}
