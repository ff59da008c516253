import { refreshNote } from '../extract/report-refresh.ts';
import type { StreamInfo } from '../extract/types.ts';
import type { ClientStats } from '../source/types.ts';
import type { DriftSummary } from './drift-catalog.ts';
import { maxPathChars, maxPathsPerStream } from '../extract/unknown-fields.ts';
import { escapeControl } from '../util/escape-control.ts';
import { renderTable, type TableColumn } from '../util/text-table.ts';

const streamColumns: readonly TableColumn[] = [
  { header: 'stream' },
  { header: 'status' },
  { header: 'records', align: 'right' },
  { header: 'pages', align: 'right' },
  { header: 'deleted', align: 'right' },
  { header: 'quarant.', align: 'right' },
  { header: 'notes', align: 'left' },
];

export interface SummaryInput {
  readonly runId: string;
  readonly status: string;
  readonly resumed: boolean;
  readonly streams: readonly StreamInfo[];
  readonly client: ClientStats;
  readonly durationMs: number;
  readonly drift?: DriftSummary;
  /** The zone timestamps without one were read in; named when some arrived so. */
  readonly siteTimeZone?: string;
  readonly extra?: readonly string[];
}

/** The end-of-run report an operator reads (stdout): one line per stream, then the totals. */
export function formatSummary(s: SummaryInput): string {
  const lines: string[] = [];
  lines.push(
    `grantflow run ${s.runId}${s.resumed ? ' (resumed)' : ''}: ${s.status.toUpperCase()} in ${(s.durationMs / 1000).toFixed(1)} s`,
  );
  lines.push('');
  const rows = s.streams.map((i) => {
    const notes: string[] = [];
    if (i.parents)
      notes.push(
        `parents ${i.parents.fetched}/${i.parents.total} fetched (${i.parents.unchanged} unchanged${i.parents.rolling ? `, ${i.parents.rolling} unchanged read again by the rolling refresh` : ''}${i.parents.idle ? `, ${i.parents.idle} with nothing to read` : ''})`,
      );
    if (i.otherFormat) notes.push(`WARNING ${i.otherFormat} files not CSV: no rows loaded (see log)`);
    if (i.reportJobs) notes.push(refreshNote(i.reportJobs));
    if (i.fullRefresh) notes.push('full refresh');
    if (i.listsDeleted) notes.push(`list rows deleted: ${tableCounts(i.listsDeleted)}`);
    if (i.cascaded) notes.push(`deleted with them: ${tableCounts(i.cascaded)}`);
    if (i.duplicates) notes.push(`${i.duplicates} duplicates skipped`);
    if (i.untyped) notes.push(`${i.untyped} values untyped`);
    if (i.naiveTimestamps) notes.push(`${i.naiveTimestamps} times without a zone`);
    if (i.silent)
      notes.push(`${i.silent} records without a list they carry (absent or null): its rows kept, not deleted`);
    if (i.parentsUnread) notes.push(`children of ${i.parentsUnread} records not read (id beyond 2^53)`);
    if (i.countMismatch) notes.push(`site reported ${i.countMismatch.reported} records, read ${i.countMismatch.read}`);
    if (i.caughtUp) notes.push('stopped at records already held');
    else if (!i.complete && i.status === 'ok' && !i.parents) notes.push('partial scan: no deletions inferred');
    if (i.reason) notes.push(i.reason);
    // The reason may quote a site's error body: the renderer shows its control characters escaped.
    return [i.stream, i.status, i.records, i.pages, i.deleted, i.quarantined, notes.join('; ')];
  });
  lines.push(...renderTable(streamColumns, rows, { indent: 2 }));
  const c = s.client;
  const quarantined = s.streams.reduce((a, i) => a + i.quarantined, 0);
  const untyped = s.streams.reduce((a, i) => a + i.untyped, 0);
  const skipped = s.streams.filter((i) => i.status === 'skipped').map((i) => i.stream);
  const failed = s.streams.filter((i) => i.status === 'failed').map((i) => i.stream);
  lines.push('');
  lines.push(
    `  requests ${c.requests} (${(c.requests / Math.max(s.durationMs / 1000, 0.001)).toFixed(2)}/s), 429s ${c.rateLimited}, retries ${c.retries}, token refreshes ${c.refreshes}, ${(c.bytes / 1e6).toFixed(1)} MB`,
  );
  if (quarantined) lines.push(`  ${quarantined} records quarantined: see table _grantflow_quarantine`);
  if (untyped)
    lines.push(
      `  ${untyped} source values could not be typed (an amount, a time, a number): NULL in their column, kept in _raw`,
    );
  const naive = s.streams.reduce((a, i) => a + (i.naiveTimestamps ?? 0), 0);
  if (naive) lines.push(`  ${naiveTimestampsLine(naive, s.siteTimeZone ?? 'UTC')}`);
  const otherFormat = s.streams.reduce((a, i) => a + (i.otherFormat ?? 0), 0);
  if (otherFormat)
    lines.push(
      `  WARNING: ${otherFormat} report files were not CSV: no rows loaded for them; each is kept whole in the raw landing (unless --land-raw false)`,
    );
  if (s.drift && s.drift.unmapped + s.drift.retyped > 0)
    lines.push(
      `  schema drift: ${s.drift.newPaths} new unmapped source fields this run (${s.drift.unmapped} seen, ${s.drift.retyped} mapped fields of another JSON type): see grantflow status, table _grantflow_unknown_fields`,
    );
  if (s.drift?.overflow)
    lines.push(
      `  schema drift beyond the catalog's bounds: ${s.drift.overflow.records} records of ${s.drift.overflow.streams.join(', ')} held fields not catalogued (over ${maxPathsPerStream} new paths per stream and run, or paths over ${maxPathChars} characters)`,
    );
  if (skipped.length) lines.push(`  skipped: ${skipped.join(', ')}`);
  if (failed.length) lines.push(`  FAILED: ${failed.join(', ')}`);
  for (const e of s.extra ?? []) lines.push(`  ${escapeControl(e)}`);
  return lines.join('\n') + '\n';
}

/** `application_tasks 30, task_responses 10`: rows deleted per table. */
function tableCounts(counts: Readonly<Record<string, number>>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([table, n]) => `${table} ${n}`)
    .join(', ');
}

/** Says how many timestamps were read in the site time zone, and which: a wrong zone shifts exactly these. */
export function naiveTimestampsLine(count: number, zone: string): string {
  return `${count} timestamps arrived without a zone: read in ${zone} (--site-time-zone); if the site means another zone, they are off by its offset`;
}
