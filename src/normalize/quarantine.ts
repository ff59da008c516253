import { createHash } from 'node:crypto';
import { GrantflowError, ExitCode } from '../util/errors.ts';
import type { JsonValue } from '../util/json.ts';
import type { Row } from './table-def.ts';

/**
 * A record that cannot be typed (no usable key, an id that is not an integer, an unparseable timestamp in a
 * column that matters). The extractor catches it and stores the record with `quarantineRow`; the run goes on.
 */
export class QuarantineError extends GrantflowError {
  constructor(readonly reason: string) {
    super(`record quarantined: ${reason}`, ExitCode.runFailed, 'quarantine');
  }
}

export function isQuarantineError(e: unknown): e is QuarantineError {
  return e instanceof QuarantineError;
}

/** JSON with object keys sorted, so the same payload always hashes the same whatever the key order. */
export function canonicalJson(v: JsonValue): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(v).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const x = v[k];
    if (x !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(x)}`);
  }
  return `{${parts.join(',')}}`;
}

/** Stable key of a payload: sha256 (hex) of its canonical JSON. */
export function recordKey(payload: JsonValue): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}

/** A row of `_grantflow_quarantine` for a record that `map` rejected. */
export function quarantineRow(
  stream: string,
  record: JsonValue,
  reason: string,
  runId: string,
  at: string | Date,
): Row {
  return {
    stream,
    record_key: recordKey(record),
    reason,
    payload: JSON.stringify(record),
    run_id: runId,
    quarantined_at: typeof at === 'string' ? at : at.toISOString(),
  };
}
