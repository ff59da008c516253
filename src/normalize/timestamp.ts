import { ConfigError } from '../util/errors.ts';

/**
 * ISO 8601 timestamps as the site may send them: with `Z`, with an offset, with fractional seconds, or naive
 * (read in the site's IANA time zone). Output is always `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` (UTC, at most
 * microseconds, trailing zeros of the fraction dropped). Returns null when the text is not a timestamp.
 */
const TS_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(?:(Z|z|UTC|GMT)|([+-])(\d{2}):?(\d{2})?)?$/;

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Timestamps read that carried no zone (read in the site time zone): counted so a run can say how many there were
 * and in which zone it read them, as a wrong --site-time-zone shifts exactly these. Never reset (read as a delta).
 */
export const naiveTimestamps = { count: 0 };

export function parseTimestamp(text: string, siteTimeZone: string): string | null {
  const m = TS_RE.exec(text.trim());
  if (m === null) return null;
  const y = +m[1]!;
  const mo = +m[2]!;
  const d = +m[3]!;
  const h = m[4] === undefined ? 0 : +m[4];
  const mi = m[5] === undefined ? 0 : +m[5];
  const s = m[6] === undefined ? 0 : +m[6];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > DAYS[mo - 1]! || h > 23 || mi > 59 || s > 59) return null;
  if (mo === 2 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return null;
  const frac = m[7] === undefined ? '' : trimFraction(m[7]);
  if (m[8] === undefined && m[9] === undefined) naiveTimestamps.count++;
  const utcMarker =
    m[8] !== undefined || (m[9] === undefined && (siteTimeZone === 'UTC' || siteTimeZone === 'Etc/UTC'));
  if (utcMarker || (m[9] !== undefined && +m[10]! === 0 && (m[11] === undefined || +m[11] === 0))) {
    // Already UTC: format from the parts, no Date round trip (the common case, and the hot path).
    return `${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}${frac}Z`;
  }
  let local = Date.UTC(y, mo - 1, d, h, mi, s);
  if (y < 100) local = new Date(local).setUTCFullYear(y);
  let offsetSec: number;
  if (m[9] !== undefined) {
    const oh = +m[10]!;
    const om = m[11] === undefined ? 0 : +m[11];
    if (oh > 23 || om > 59) return null;
    offsetSec = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  } else offsetSec = zoneOffset(siteTimeZone, local);
  const iso = new Date(local - offsetSec * 1000).toISOString();
  // Beyond year 9999 or before year 1 after the shift (Postgres has no year 0; DuckDB would store one).
  if (iso.length !== 24 || iso.startsWith('0000')) return null;
  return `${iso.slice(0, 19)}${frac}Z`;
}

/** `.ffffff` (at most microseconds, trailing zeros dropped) or '' when there is no fraction left. */
function trimFraction(digits: string): string {
  let end = Math.min(digits.length, 6);
  while (end > 0 && digits.charCodeAt(end - 1) === 48) end--;
  return end === 0 ? '' : `.${digits.slice(0, end)}`;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const offsetCache = new Map<string, number>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
        era: 'short',
      });
    } catch (e) {
      throw new ConfigError(`Unknown site time zone "${zone}": give an IANA zone such as "Europe/Paris" or "UTC".`, {
        cause: e,
      });
    }
    formatters.set(zone, f);
  }
  return f;
}

/**
 * Offset (seconds east of UTC) of `zone` at the UTC instant `instantMs`: seconds, not minutes, as a zone's local mean
 * time before standard time has them (New York -4:56:02 until 1883).
 */
function offsetAt(zone: string, instantMs: number): number {
  const parts = formatter(zone).formatToParts(new Date(instantMs));
  let y = 0,
    mo = 0,
    d = 0,
    h = 0,
    mi = 0,
    s = 0,
    bc = false;
  for (const p of parts) {
    switch (p.type) {
      case 'year':
        y = +p.value;
        break;
      case 'month':
        mo = +p.value;
        break;
      case 'day':
        d = +p.value;
        break;
      case 'hour':
        h = +p.value;
        break;
      case 'minute':
        mi = +p.value;
        break;
      case 'second':
        s = +p.value;
        break;
      case 'era':
        bc = p.value === 'BC';
        break;
    }
  }
  let wall = Date.UTC(bc ? 1 - y : y, mo - 1, d, h, mi, s);
  if (!bc && y < 100) wall = new Date(wall).setUTCFullYear(y);
  return Math.round((wall - (instantMs - (((instantMs % 1000) + 1000) % 1000))) / 1000);
}

/**
 * Offset of `zone` for a wall-clock time given as if it were UTC. In a DST gap the time is read with the
 * offset before the change (02:30 that does not exist becomes 03:30 new time); in an overlap the earlier
 * instant wins — the same choice as JavaScript's Date and Temporal's 'compatible'.
 */
export function zoneOffset(zone: string, localAsUtcMs: number): number {
  const cacheKey = `${zone}|${Math.floor(localAsUtcMs / 3_600_000)}`;
  const cached = offsetCache.get(cacheKey);
  if (cached !== undefined) return cached;
  const o1 = offsetAt(zone, localAsUtcMs);
  // The offsets in force a day before and after bound any transition near this wall time; each that maps the wall
  // time back to itself is a reading of it (two in an overlap, none in a gap).
  const before = offsetAt(zone, localAsUtcMs - 86_400_000);
  const after = offsetAt(zone, localAsUtcMs + 86_400_000);
  const readings = [o1, before, after].filter((o) => offsetAt(zone, localAsUtcMs - o * 1000) === o);
  // Overlap: the larger offset is the earlier instant. Gap: the offset before the change moves the time forward.
  const result = readings.length > 0 ? Math.max(...readings) : before;
  // Only hours away from a transition are cached: near one the offset can differ within the hour.
  if (
    before === o1 &&
    after === o1 &&
    offsetAt(zone, localAsUtcMs - o1 * 1000 - 3_600_000) === o1 &&
    offsetAt(zone, localAsUtcMs - o1 * 1000 + 3_600_000) === o1
  ) {
    if (offsetCache.size > 50_000) offsetCache.clear();
    offsetCache.set(cacheKey, result);
  }
  return result;
}
