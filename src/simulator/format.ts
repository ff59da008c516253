import type { Rng } from './random.ts';

/** Money is generated in integer cents; the API sends numbers (dollars) or, for some fields, "$1,250.00". */
export function dollars(cents: number): number {
  return Math.round(cents) / 100;
}

export function moneyString(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.round(cents));
  const whole = Math.floor(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}$${whole}.${String(abs % 100).padStart(2, '0')}`;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/**
 * ISO 8601 the way real data arrives: mostly `Z`, some `+02:00` offsets (same instant), some fractional
 * seconds, a few naive (no zone; meant as UTC).
 */
export function timestamp(rng: Rng, ms: number): string {
  const roll = rng.next();
  if (roll < 0.8) return isoSeconds(ms) + 'Z';
  if (roll < 0.9) return isoSeconds(ms + 2 * 3_600_000) + '+02:00';
  if (roll < 0.97) {
    const d = new Date(ms);
    return `${isoSeconds(ms)}.${pad(d.getUTCMilliseconds(), 3)}${pad(rng.int(0, 999), 3)}Z`;
  }
  return isoSeconds(ms);
}

/** `YYYY-MM-DDTHH:MM:SS` in UTC, no zone. */
export function isoSeconds(ms: number): string {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  return d.toISOString().slice(0, 19);
}

/** A write's timestamp: now, in the canonical form. */
export function nowStamp(): string {
  return new Date().toISOString();
}

export const DAY_MS = 86_400_000;
/** Generated history starts here. */
export const EPOCH_MS = Date.UTC(2024, 0, 1);
