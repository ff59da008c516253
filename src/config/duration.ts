/**
 * A duration as an operator writes it for a schedule: whole numbers with units, largest first, e.g. `5h30m`, `90m`,
 * `45s` or `1500ms` (`d` for days). Spaces between the parts are allowed.
 */
const durationPattern =
  /^\s*(?:(\d+)\s*d)?\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*m(?!s))?\s*(?:(\d+)\s*s)?\s*(?:(\d+)\s*ms)?\s*$/i;

const unitMs = [86_400_000, 3_600_000, 60_000, 1_000, 1] as const;

/** Milliseconds of a duration such as `5h30m`, or null when the text is not one (or is zero). */
export function durationMs(text: string): number | null {
  const m = durationPattern.exec(text);
  if (!m || m.slice(1).every((part) => part === undefined)) return null;
  const ms = unitMs.reduce((sum, unit, i) => sum + Number(m[i + 1] ?? 0) * unit, 0);
  return ms > 0 && Number.isSafeInteger(ms) ? ms : null;
}

/** Like durationMs, but a zero duration (`0s`, `0d`) is 0 rather than refused: a window that may be empty. */
export function durationOrZeroMs(text: string): number | null {
  const ms = durationMs(text);
  if (ms !== null) return ms;
  return /^\s*0+\s*(d|h|m|s|ms)\s*$/i.test(text) ? 0 : null;
}

/** A duration in the units it is written in (`5h30m`), for messages. */
export function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
    ['ms', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.join('') || '0s';
}
