import { jsonTypeName, type FieldObserver } from '../normalize/index.ts';
import type { JsonValue } from '../util/json.ts';
import { redact, secretKeys } from '../util/redact.ts';

/** What one run saw of one drifting path. */
export interface UnknownFieldSeen {
  readonly stream: string;
  readonly path: string;
  readonly kind: 'unmapped' | 'retyped';
  readonly types: Set<string>;
  records: number;
  /** JSON text of the first value seen, secrets redacted. */
  readonly example: string;
}

const EXAMPLE_CHARS = 200;
/** Keys whose values are secrets wherever they sit (the log's list, and the usual spellings of others). */
const SECRET_KEY = new RegExp(`(^|_)(${[...secretKeys, 'token', 'secret', 'api_key', 'apikey'].join('|')})$`, 'i');

/** A value fit to be stored and shown: members named like secrets hidden, registered secrets redacted, cut short. */
export function exampleValue(path: string, v: JsonValue): string {
  const key = path.slice(path.lastIndexOf('.') + 1).replace(/\[\]$/, '');
  const text = SECRET_KEY.test(key)
    ? JSON.stringify('[REDACTED]')
    : JSON.stringify(v, (k, x: unknown) => (k !== '' && SECRET_KEY.test(k) ? '[REDACTED]' : x));
  const safe = redact(text);
  return safe.length > EXAMPLE_CHARS ? `${safe.slice(0, EXAMPLE_CHARS - 3)}...` : safe;
}

/**
 * Bounds of what one run catalogues, so a site cannot grow the catalog (and the process) without end: a hostile one
 * sent 500 new 100-character names per record, page after page, and the run died of heap exhaustion. Real sites
 * drift by a handful of fields a release (the simulator's drift adds 6; a custom-field-heavy site a few dozen), so
 * 1,000 distinct paths per stream and run, and 256 characters a path (a dozen nested keys of ordinary length), never
 * cut real drift; what lies beyond is counted, and the summary says so once.
 */
export const maxPathsPerStream = 1_000;
export const maxPathChars = 256;

/** Drift beyond the catalog's bounds: records that held a path not catalogued, per stream. */
export interface DriftOverflow {
  readonly records: number;
  readonly streams: readonly string[];
}

/**
 * The drift a run saw, for `_grantflow_unknown_fields`: each stream's batcher reports to its own observer. Counts
 * records, not occurrences (a path inside an array counts once per record).
 */
export class UnknownFields {
  private readonly seen = new Map<string, UnknownFieldSeen & { lastRecord: number }>();
  private readonly paths = new Map<string, number>();
  private readonly overflowing = new Map<string, number>();

  observer(stream: string): FieldObserver {
    let record = 0;
    let overflowRecord = 0;
    const overflow = (): void => {
      if (overflowRecord === record) return;
      overflowRecord = record;
      this.overflowing.set(stream, (this.overflowing.get(stream) ?? 0) + 1);
    };
    const note = (kind: 'unmapped' | 'retyped', path: string, value: JsonValue): void => {
      if (path.length > maxPathChars) return overflow();
      const key = `${stream}\u0000${path}`;
      let entry = this.seen.get(key);
      if (entry === undefined) {
        const held = this.paths.get(stream) ?? 0;
        if (held >= maxPathsPerStream) return overflow();
        this.paths.set(stream, held + 1);
        entry = { stream, path, kind, types: new Set(), records: 0, example: exampleValue(path, value), lastRecord: 0 };
        this.seen.set(key, entry);
      }
      entry.types.add(jsonTypeName(value));
      if (entry.lastRecord !== record) {
        entry.lastRecord = record;
        entry.records++;
      }
    };
    return {
      startRecord: () => void record++,
      unmapped: (path, value) => note('unmapped', path, value),
      retyped: (path, value) => note('retyped', path, value),
    };
  }

  list(): UnknownFieldSeen[] {
    return [...this.seen.values()];
  }

  /** What the bounds left out; undefined when nothing was. */
  overflow(): DriftOverflow | undefined {
    if (this.overflowing.size === 0) return undefined;
    let records = 0;
    for (const n of this.overflowing.values()) records += n;
    return { records, streams: [...this.overflowing.keys()].sort() };
  }
}
