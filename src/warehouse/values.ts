import type { CellValue } from '../normalize/table-def.ts';

/**
 * Result values are made identical across dialects (a DuckDB table and a Postgres table compare cell by cell):
 * integers -> number (string beyond 2^53), decimals -> string with the column's scale, timestamps -> ISO UTC
 * with microseconds, json -> stored text unchanged.
 */

/** An integer as a number when exact, else its decimal string. */
export function intValue(v: bigint | string): number | string {
  const b = typeof v === 'bigint' ? v : BigInt(v);
  return b <= BigInt(Number.MAX_SAFE_INTEGER) && b >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(b) : b.toString();
}

/** Decimal from an unscaled integer and a scale: (1230n, 2) -> "12.30"; scale 0 behaves like an integer. */
export function decimalValue(unscaled: bigint, scale: number): number | string {
  if (scale === 0) return intValue(unscaled);
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** Postgres numeric text: integers (e.g. sum(bigint)) become numbers like DuckDB's HUGEINT, others stay strings. */
export function numericText(text: string): number | string {
  return /^-?\d+$/.test(text) ? intValue(text) : text;
}

const pad = (n: number | bigint, width: number): string => n.toString().padStart(width, '0');

/** Microseconds since the epoch -> `2024-01-02T03:04:05.123456Z` (naive timestamps get no `Z`). */
export function microsToIso(micros: bigint, zone: boolean): string {
  const frac = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  // Date handles the calendar on whole seconds; microseconds come from the exact remainder.
  const d = new Date(Number((micros - frac) / 1000n));
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  const time = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  return `${date}T${time}.${pad(frac, 6)}${zone ? 'Z' : ''}`;
}

/** Postgres timestamp text (session TimeZone UTC): `2024-01-02 03:04:05.12+00` -> `2024-01-02T03:04:05.120000Z`. */
export function pgTimestampText(text: string, zone: boolean): string {
  const m = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?([+-]\d\d(?::?\d\d)?)?$/.exec(text);
  if (!m) return text; // infinity, BC dates: shown as Postgres prints them
  const [, date, time, frac = '', offset] = m;
  if (offset !== undefined && offset !== '+00' && zone) {
    // Session TimeZone is UTC, so this only happens if a caller changed it: normalise through Date (ms precision).
    return microsToIso(BigInt(Date.parse(`${date}T${time}.${frac.padEnd(3, '0').slice(0, 3)}${offset}`)) * 1000n, true);
  }
  return `${date}T${time}.${frac.padEnd(6, '0')}${zone ? 'Z' : ''}`;
}

/** Text COPY format: backslash, tab, newline and carriage return escaped; NULL is `\N`. */
export function copyText(v: CellValue): string {
  if (v === null) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  const s = typeof v === 'string' ? v : String(v);
  return /[\\\t\n\r]/.test(s) ? s.replace(/[\\\t\n\r]/g, escapeChar) : s;
}

function escapeChar(c: string): string {
  switch (c) {
    case '\\':
      return '\\\\';
    case '\t':
      return '\\t';
    case '\n':
      return '\\n';
    default:
      return '\\r';
  }
}

/** A double-quoted SQL identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A single-quoted SQL literal (only for values we generate: fingerprints, table names in catalog queries). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
