import { Progress } from '../extract/progress.ts';
import type { StreamDef } from '../extract/stream-def.ts';
import type { SiteClient } from '../source/types.ts';
import { isJsonObject } from '../util/json.ts';
import type { Logger } from '../util/logger.ts';
import { isPostgresTarget } from '../warehouse/index.ts';
import type { RunRecord } from '../warehouse/types.ts';
import { liveProgressPublisher } from './live-progress-file.ts';

export interface RunProgressInput {
  readonly logger: Logger;
  readonly tty: boolean | undefined;
  readonly warehouse: string;
  readonly runId: string;
  readonly client: SiteClient;
  /** The last run before this one: its pages per stream are the first estimate of this run's. */
  readonly last: RunRecord | undefined;
  readonly streams: readonly StreamDef[];
}

/**
 * The live progress of a sync: counts the client's requests, estimates from the last run's pages and the streams'
 * parents, and (DuckDB, whose file the run holds) publishes itself beside the warehouse for `status`.
 */
export function runProgress(input: RunProgressInput): Progress {
  const selected = new Set(input.streams.map((d) => d.name as string));
  const expected = new Map<string, number>();
  const summary = input.last?.summary;
  const lastStreams = isJsonObject(summary) && Array.isArray(summary.streams) ? summary.streams : [];
  for (const s of lastStreams) {
    if (isJsonObject(s) && typeof s.stream === 'string' && typeof s.pages === 'number' && selected.has(s.stream))
      expected.set(s.stream, s.pages);
  }
  const parents = new Map(input.streams.flatMap((d) => (d.parent ? [[d.name as string, d.parent.stream]] : [])));
  for (const d of input.streams) if (!d.parent && !expected.has(d.name)) expected.set(d.name, 1);
  return new Progress(input.logger, input.tty, {
    requests: () => input.client.stats.requests,
    expected,
    parents,
    ...(isPostgresTarget(input.warehouse) ? {} : { publish: liveProgressPublisher(input.warehouse, input.runId) }),
  });
}
