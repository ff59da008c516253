import type { JsonValue } from '../util/json.ts';
import { QuarantineError } from './quarantine.ts';

/**
 * How deeply a record may nest. V8 parses any depth, but every recursive walk after it (the record walk, the change
 * marker's hash, JSON.stringify for `_raw`) overflows the stack somewhere past a few thousand levels, which failed the
 * whole stream on every run. The spec's deepest record nests 5 levels; 200 is far beyond any real one and far below
 * where a walk overflows.
 */
export const maxRecordDepth = 200;

/** Whether `v` nests more than `limit` objects or arrays deep; recursion stops at `limit`, so it cannot overflow. */
export function deeperThan(v: JsonValue | undefined, limit: number): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (limit === 0) return true;
  if (Array.isArray(v)) {
    for (const item of v) if (deeperThan(item, limit - 1)) return true;
    return false;
  }
  for (const k in v) if (deeperThan(v[k], limit - 1)) return true;
  return false;
}

const cutMark = `[nested deeper than ${maxRecordDepth} levels: cut; whole in the raw landing]`;

/** `v` with what lies deeper than `limit` levels replaced by a note: a payload JSON.stringify can write. */
export function cutDeep(v: JsonValue, limit = maxRecordDepth): JsonValue {
  if (typeof v !== 'object' || v === null) return v;
  if (limit === 0) return cutMark;
  if (Array.isArray(v)) return v.map((item) => cutDeep(item, limit - 1));
  const out: Record<string, JsonValue> = Object.create(null) as Record<string, JsonValue>;
  for (const k in v) out[k] = cutDeep(v[k]!, limit - 1);
  return out;
}

/** A record nested too deep to read: quarantined with its shallow part, the stream goes on. */
export class TooDeepError extends QuarantineError {
  constructor(readonly cut: JsonValue) {
    super(`the record nests more than ${maxRecordDepth} levels deep`);
  }
}
