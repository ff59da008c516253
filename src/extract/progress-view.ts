import { cutToWidth } from '../util/terminal-screen.ts';
import { escapeControl } from '../util/escape-control.ts';

/** One stream's progress as the live view and `status` show it. */
export interface StreamProgress {
  stream: string;
  pages: number;
  records: number;
  /** The most records a page held: the site's page size, to turn a total into pages. */
  pageSize: number;
  /** The list's total (`count`) when the site sends one. */
  total: number | null;
  parentsDone: number;
  parentsTotal: number;
  startedAt: number;
  end?: 'done' | 'skipped' | 'failed' | 'interrupted';
  note?: string;
}

export interface ProgressSnapshot {
  readonly startedAt: string;
  readonly at: string;
  /** Requests sent since the extraction started. */
  readonly requests: number;
  /** Requests the whole extraction is expected to take (grows as streams report their totals). */
  readonly estimate: number;
  /** Requests per second, measured over the last half minute. */
  readonly rate: number;
  readonly finished: boolean;
  /** Streams the run runs, started or not (fan-out included); absent in a file an older version wrote. */
  readonly streamCount?: number;
  readonly streams: readonly StreamProgress[];
}

const count = (n: number): string => n.toLocaleString('en-US');

/** 75s, 4m05s, 2h10m. */
export function duration(seconds: number): string {
  const s = Math.max(Math.round(seconds), 0);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Seconds left of a fan-out stream at its parents' pace so far; null while it has none. */
export function streamEtaSeconds(s: StreamProgress, now: number): number | null {
  if (s.end || s.parentsTotal <= 0) return null;
  const secs = (now - s.startedAt) / 1000;
  const perSec = secs > 0 ? s.parentsDone / secs : 0;
  return perSec > 0 ? (s.parentsTotal - s.parentsDone) / perSec : null;
}

/**
 * Seconds left at the measured rate, never less than a running stream's own ETA (the run ends after its last
 * stream); null while there is no rate to go by.
 */
export function etaSeconds(snap: ProgressSnapshot): number | null {
  if (snap.rate <= 0) return null;
  const now = Date.parse(snap.at);
  const streams = snap.streams.map((s) => streamEtaSeconds(s, now) ?? 0);
  return Math.max(Math.max(snap.estimate - snap.requests, 0) / snap.rate, ...streams);
}

/** The overall line: requests done of the estimate, the rate, the ETA and the time so far. */
export function describeOverall(snap: ProgressSnapshot): string {
  const elapsed = (Date.parse(snap.at) - Date.parse(snap.startedAt)) / 1000;
  const pct = snap.estimate > 0 ? Math.floor((100 * snap.requests) / snap.estimate) : 0;
  const eta = etaSeconds(snap);
  const interrupted = snap.streams.some((s) => s.end === 'interrupted');
  const tail = snap.finished ? (interrupted ? 'interrupted' : 'done') : `ETA ${eta === null ? '?' : duration(eta)}`;
  return `requests ${count(snap.requests)}/~${count(snap.estimate)} (${pct}%)  ${snap.rate.toFixed(1)}/s  ${tail}  elapsed ${duration(elapsed)}`;
}

function describeStream(s: StreamProgress, nameWidth: number, now: number): string {
  const name = cutToWidth(s.stream, nameWidth).padEnd(nameWidth);
  const parts = [`${count(s.records).padStart(8)} rec`, `${count(s.pages).padStart(5)} pages`];
  if (s.parentsTotal > 0) {
    parts.push(`parents ${count(s.parentsDone)}/${count(s.parentsTotal)}`);
    const eta = streamEtaSeconds(s, now);
    if (eta !== null) parts.push(`ETA ${duration(eta)}`);
  } else if (s.total !== null && !s.end) parts.push(`of ${count(s.total)}`);
  if (s.end && s.end !== 'done') parts.push(s.end);
  return `  ${name} ${parts.join('  ')}`;
}

/**
 * The live view: the overall line first, then the streams under way (or, once stopped, those interrupted or failed),
 * then one line counting the rest; at most `rows` lines of at most `columns` characters.
 */
export function progressView(snap: ProgressSnapshot, columns: number, rows: number): string[] {
  const now = Date.parse(snap.at);
  const active = snap.streams.filter((s) => !s.end || s.end === 'interrupted' || s.end === 'failed');
  const ended = snap.streams.filter((s) => s.end);
  const failed = ended.filter((s) => s.end === 'failed').length;
  const nameWidth = Math.min(Math.max(...active.map((s) => s.stream.length), 6), Math.max(Math.floor(columns / 3), 8));
  // A narrow terminal loses the label and the time so far before the ETA is cut.
  const overall = describeOverall(snap);
  const head =
    [
      `grantflow sync  ${overall}`,
      overall,
      overall.replace(/ {2}elapsed \S+$/, ''),
      overall.replace(/ {2}elapsed \S+$/, '').replace(/ \(\d+%\)/, ''),
    ].find((h) => [...h].length <= columns) ?? overall;
  const foot = `  ${ended.length} of ${snap.streamCount ?? snap.streams.length} streams ended${failed ? `, ${failed} failed` : ''}`;
  const room = Math.max(rows - 2, 0);
  let shown = active;
  let more = '';
  if (active.length > room) {
    shown = active.slice(0, Math.max(room - 1, 0));
    more = `  … and ${active.length - shown.length} more streams`;
  }
  const lines = [head, ...shown.map((s) => describeStream(s, nameWidth, now))];
  if (more) lines.push(more);
  if (lines.length < rows) lines.push(foot);
  // Escaped as the one guard of the live view: no text in it may move the cursor it redraws with.
  return lines.slice(0, rows).map((l) => cutToWidth(escapeControl(l), columns));
}
