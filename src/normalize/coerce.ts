import type { JsonObject, JsonValue } from '../util/json.ts';
import { parseMoney } from './money.ts';
import { QuarantineError } from './quarantine.ts';
import { parseTimestamp } from './timestamp.ts';

/**
 * Typing of single values. Lenient helpers return null for values that are merely odd (the record's `_raw`
 * keeps them, `untypedValues` counts them); `req*` helpers and ids throw QuarantineError where the value matters
 * for identity.
 */

const INT_TEXT = /^-?\d+$/;

/**
 * Values present in the source that a lenient helper could not type: their column is NULL and `_raw` keeps them.
 * Counted so a run can say how many there were (the batcher reads it around each record); never reset.
 */
export const untypedValues = { count: 0 };

/** Present: not absent, null or blank (those are plain NULLs, nothing was lost). */
function present(v: JsonValue | undefined): boolean {
  return v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');
}

/** `typed`, or, for a present value that gave null, null counted in `untypedValues`. */
function lenient<T>(v: JsonValue | undefined, typed: T | null): T | null {
  if (typed === null && present(v)) untypedValues.count++;
  return typed;
}

function describe(v: JsonValue | undefined): string {
  const s = v === undefined ? 'missing' : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** An integer id, or null when absent/null/blank; anything else is not an id and quarantines the record. */
export function optId(v: JsonValue | undefined, field: string): number | bigint | null {
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return v;
    // JSON.parse has already rounded it: two ids could become one key, so the record is not loaded.
    if (Number.isInteger(v))
      throw new QuarantineError(
        `${field} is a JSON number beyond 2^53, whose digits are lost when read (${describe(v)})`,
      );
  } else if (v === undefined || v === null || v === '') return null;
  else if (typeof v === 'string') {
    const t = v.trim();
    if (INT_TEXT.test(t)) {
      const n = Number(t);
      if (Number.isSafeInteger(n)) return n;
      const big = BigInt(t);
      if (big >= BIGINT_MIN && big <= BIGINT_MAX) return big;
      throw new QuarantineError(`${field} does not fit a 64-bit integer id (${describe(v)})`);
    }
  }
  throw new QuarantineError(`${field} is not an integer id (${describe(v)})`);
}

/**
 * An integer id that is neither a key nor a reference (a site's own numbering, a log's object id): one that cannot
 * be read exactly is NULL and counted, the record still loads.
 */
export function attrId(v: JsonValue | undefined, field: string): number | bigint | null {
  try {
    return optId(v, field);
  } catch (e) {
    if (!(e instanceof QuarantineError)) throw e;
    return lenient(v, null);
  }
}

/** An integer id that must be present (a key): absent or invalid quarantines the record. */
export function reqId(v: JsonValue | undefined, field: string): number | bigint {
  const id = optId(v, field);
  if (id === null) throw new QuarantineError(`${field} is missing: the record has no usable key`);
  return id;
}

/** Lenient integer for BIGINT columns that are not ids (sizes): exact integers, as numbers or text; else null. */
export function long(v: JsonValue | undefined): number | null {
  return lenient(v, safeInteger(v));
}

function safeInteger(v: JsonValue | undefined): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : null;
  if (typeof v === 'string' && INT_TEXT.test(v.trim())) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : null;
  }
  return null;
}

/**
 * Lenient integer for INTEGER columns (counts, enum codes): null outside 32 bits, where the column would reject
 * the value and fail the whole stream's load.
 */
export function int(v: JsonValue | undefined): number | null {
  const n = safeInteger(v);
  return lenient(v, n !== null && n >= INT32_MIN && n <= INT32_MAX ? n : null);
}

/** Decimal text, with an optional exponent: what Number() reads besides ("0x10", "0b101", "0o17") is not. */
const DECIMAL_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Lenient double: numbers and decimal text. */
export function dbl(v: JsonValue | undefined): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = DECIMAL_TEXT.test(v.trim()) ? Number(v) : NaN;
    return lenient(v, Number.isFinite(n) ? n : null);
  }
  return lenient(v, null);
}

/**
 * A percentage as a fraction from 0 to 1 (57.3 -> 0.573): every ratio grantflow stores is a fraction. One binary
 * floating-point division, the one the migration of stored percentages (migrations.ts) makes on either engine, so a
 * value reads the same whether it was loaded after the change or migrated.
 */
export function percentAsFraction(n: number | null): number | null {
  return n === null ? null : n / 100;
}

/** Boolean text as PostgreSQL reads it (any case, surrounding blanks ignored). */
const TRUE_TEXT = new Set(['true', 't', 'yes', 'y', 'on', '1']);
const FALSE_TEXT = new Set(['false', 'f', 'no', 'n', 'off', '0']);

/** Lenient boolean: JSON booleans, 1/0, and boolean text ("true", "TRUE", "yes", "off", ...). */
export function bool(v: JsonValue | undefined): boolean | null {
  if (typeof v === 'boolean') return v;
  if (v === 1) return true;
  if (v === 0) return false;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (TRUE_TEXT.has(t)) return true;
    if (FALSE_TEXT.has(t)) return false;
  }
  return lenient(v, null);
}

/** Text with U+0000 replaced (Postgres cannot store it); numbers/booleans as text, objects as JSON text. */
export function text(v: JsonValue | undefined): string | null {
  if (typeof v === 'string') return v.includes('\u0000') ? v.replaceAll('\u0000', '\uFFFD') : v;
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return cleanText(JSON.stringify(v));
}

export function cleanText(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s;
}

/** JSON text of any present value (null stays SQL NULL). */
export function json(v: JsonValue | undefined): string | null {
  return v === undefined || v === null ? null : JSON.stringify(v);
}

export function money(v: JsonValue | undefined): string | null {
  return lenient(v, parseMoney(v));
}

/** Lenient timestamp: blank, null or unparseable gives null (kept in `_raw`). */
export function ts(v: JsonValue | undefined, zone: string): string | null {
  return lenient(v, typeof v === 'string' && v !== '' ? parseTimestamp(v, zone) : null);
}

/** Timestamp that matters (sync cursors, log times): present but unparseable quarantines the record. */
export function reqTs(v: JsonValue | undefined, zone: string, field: string): string | null {
  if (v === undefined || v === null || v === '') return null;
  const r = typeof v === 'string' ? parseTimestamp(v, zone) : null;
  if (r === null) throw new QuarantineError(`${field} is not a timestamp (${describe(v)})`);
  return r;
}

/** An empty array or object: the other container's "nothing" (PHP sends an empty map as `[]`), not a lost value. */
const emptyContainer = (v: JsonValue | undefined): boolean =>
  typeof v === 'object' && v !== null && Object.keys(v).length === 0;

/** The object at `v`, or null when it is absent or not an object (a present value of another shape is counted). */
export function obj(v: JsonValue | undefined): JsonObject | null {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v;
  if (!emptyContainer(v)) lenient(v, null);
  return null;
}

/** The array at `v`; empty when it is absent or not an array (a present value of another shape is counted). */
export function arr(v: JsonValue | undefined): JsonValue[] {
  if (Array.isArray(v)) return v;
  if (!emptyContainer(v)) lenient(v, null);
  return [];
}

/** Counts a present value the mapping could not use (an entry without a key, ...): it stays only in `_raw`. */
export function untyped(v: JsonValue | undefined): void {
  lenient(v, null);
}
