import type { CellValue } from '../normalize/table-def.ts';

/**
 * How the report writes numbers. Exact: money and rates come from the warehouse as decimal text (values.ts) and are
 * rounded here in decimal, never through a double, so a table shows the cents the warehouse holds. The tests format
 * the rows they read with these same functions.
 */

/** Shown for NULL: the warehouse does not know the value (an unreadable amount, no decisions to rate). */
export const unknownText = '—';

const decimalPattern = /^(-?)(\d+)(?:\.(\d+))?$/;

/** `value` rounded half up (away from zero) to `places` decimals, as [sign, integer digits, fraction digits]. */
function rounded(text: string, places: number): [string, string, string] | null {
  const m = decimalPattern.exec(text.trim());
  if (!m) return null;
  const [, sign = '', int = '0', frac = ''] = m;
  const scaled = BigInt(int + frac.padEnd(places, '0').slice(0, places));
  const up = frac.length > places && Number(frac[places]) >= 5 ? 1n : 0n;
  const digits = (scaled + up).toString().padStart(places + 1, '0');
  const intPart = places === 0 ? digits : digits.slice(0, -places);
  const fracPart = places === 0 ? '' : digits.slice(-places);
  const zero = /^0*$/.test(intPart + fracPart);
  return [zero ? '' : sign, intPart, fracPart];
}

/** Thousands separators: 1234567 -> 1,234,567. */
function grouped(int: string): string {
  return int.replace(/^0+(?=\d)/, '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A decimal value as text (decimal strings as the warehouse returns them, or numbers); null when it is not one. */
function decimalText(value: CellValue): string | null {
  if (value === null || typeof value === 'boolean') return null;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    // A number here is an integer (values.ts): exact as written. A fraction keeps the digits JavaScript prints.
    return Number.isInteger(value) ? value.toFixed(0) : String(value);
  }
  return String(value);
}

/** A number with `places` decimals and thousands separators: 1234.5 -> "1,234.50"; NULL -> "—". */
export function formatNumber(value: CellValue, places: number): string {
  const text = decimalText(value);
  if (text === null) return unknownText;
  const r = rounded(text, places);
  if (!r) return text;
  const [sign, int, frac] = r;
  return `${sign}${grouped(int)}${frac ? `.${frac}` : ''}`;
}

/** Money: two decimals and thousands separators, from the exact decimal: "1234567.5" -> "1,234,567.50". */
export function formatMoney(value: CellValue): string {
  return formatNumber(value, 2);
}

/** A count: "1,234". */
export function formatCount(value: CellValue): string {
  return formatNumber(value, 0);
}

/** A fraction from 0 to 1 as a percentage with one decimal: "0.523810" -> "52.4 %". */
export function formatPercent(value: CellValue): string {
  const text = decimalText(value);
  if (text === null) return unknownText;
  const m = decimalPattern.exec(text.trim());
  if (!m) return text;
  const [, sign = '', int = '0', frac = ''] = m;
  // Moving the decimal point two places is exact in text.
  const shifted = `${sign}${int}${frac.padEnd(2, '0').slice(0, 2)}.${frac.slice(2) || '0'}`;
  return `${formatNumber(shifted, 1)} %`;
}

/** Days with one decimal: "12.3456" -> "12.3". */
export function formatDays(value: CellValue): string {
  return formatNumber(value, 1);
}

/** Milliseconds as seconds with one decimal: 12345 -> "12.3 s". */
export function formatDuration(ms: CellValue): string {
  if (ms === null || typeof ms === 'boolean') return unknownText;
  const n = Number(ms);
  if (!Number.isFinite(n)) return unknownText;
  return `${formatNumber((n / 1000).toFixed(3), 1)} s`;
}

/** An ISO timestamp to the minute, in UTC: "2026-11-27T05:34:15.123456Z" -> "2026-11-27 05:34 UTC". */
export function formatTime(value: CellValue): string {
  if (value === null || typeof value !== 'string') return unknownText;
  const m = /^(\d{4,}-\d\d-\d\d)T(\d\d:\d\d)/.exec(value);
  return m ? `${m[1]} ${m[2]} UTC` : value;
}

/** A boolean as yes/no; NULL -> "—". */
export function formatYesNo(value: CellValue): string {
  if (value === null) return unknownText;
  return value === true || value === 'true' || value === 1 ? 'yes' : 'no';
}

/** A name, or a stand-in saying which record it is when the name is unknown: "program 12". */
export function nameOr(name: CellValue, what: string, id: CellValue): string {
  return name === null || String(name).trim() === '' ? `${what} ${String(id ?? '?')}` : String(name);
}

/**
 * Exact sum of decimal values in cents (money); null when one of them is unknown, since a total missing an amount
 * would look exact (the models do the same).
 */
export function sumMoney(values: readonly CellValue[]): string | null {
  let cents = 0n;
  for (const v of values) {
    const text = decimalText(v);
    if (text === null) return null;
    const r = rounded(text, 2);
    if (!r) return null;
    const [sign, int, frac] = r;
    cents += (sign ? -1n : 1n) * BigInt(int + frac);
  }
  const neg = cents < 0n;
  const digits = (neg ? -cents : cents).toString().padStart(3, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/**
 * A money total over the known values, saying how many were unknown rather than hiding them: "1,250.00" or
 * "1,250.00 + 2 unknown". Totals rows use it: a missing budget row is NULL too, so a strict NULL would blank most
 * totals.
 */
export function formatMoneyTotal(values: readonly CellValue[]): string {
  const known = values.filter((v) => v !== null);
  const unknown = values.length - known.length;
  return `${formatMoney(sumMoney(known))}${unknown > 0 ? ` + ${unknown} unknown` : ''}`;
}

/** `numerator / denominator` as decimal text with 6 places, rounded half up (as the models' rates); null for 0. */
export function ratio(numerator: number, denominator: number): string | null {
  if (denominator === 0) return null;
  const n = BigInt(Math.round(numerator));
  const d = BigInt(Math.round(denominator));
  const scaled = (n * 10_000_000n) / d;
  const r = (scaled + (scaled >= 0n ? 5n : -5n)) / 10n;
  const neg = r < 0n;
  const digits = (neg ? -r : r).toString().padStart(7, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -6)}.${digits.slice(-6)}`;
}

/** How long before `now` an ISO time was: "45 min", "3 h 12 min", "2 d 4 h". */
export function formatAge(from: CellValue, now: string): string {
  if (typeof from !== 'string') return unknownText;
  const ms = Date.parse(now) - Date.parse(from);
  if (!Number.isFinite(ms)) return unknownText;
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}
