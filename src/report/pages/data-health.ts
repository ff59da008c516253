import { runReason } from '../../pipeline/run-reason.ts';
import type { RunRecord } from '../../warehouse/types.ts';
import { isJsonObject } from '../../util/json.ts';
import { barSpec, renderChart } from '../charts.ts';
import { formatAge, formatCount, formatDuration, formatTime, unknownText } from '../format.ts';
import { empty, esc, figure, page, section, table, tiles, type PageContext } from '../html.ts';
import { lastFinishedRun, runStreams, type ReportData } from '../report-data.ts';

/** A run's status as shown: a run left `running` that no sync holds was killed. */
export function runStatus(run: RunRecord, data: ReportData): string {
  return run.status === 'running' && data.runningDied ? 'killed' : run.status;
}

/** Why a run did not succeed, in one line (as `grantflow status` says it). */
export function runWhy(run: RunRecord, data: ReportData): string {
  if (run.status === 'succeeded') return '';
  if (run.status === 'running')
    return data.runningDied
      ? 'no sync is running it: it was killed or crashed; the next sync resumes it'
      : 'running now';
  return runReason(run.summary) ?? '';
}

/** Requests, 429s, retries and records of a run, from its summary; null where the run recorded none. */
export function runNumbers(run: RunRecord): {
  durationMs: number | null;
  requests: number | null;
  rateLimited: number | null;
  retries: number | null;
  records: number | null;
} {
  const s = isJsonObject(run.summary) ? run.summary : {};
  const client = isJsonObject(s.client) ? s.client : {};
  const n = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  const streams = runStreams(run);
  return {
    durationMs: n(s.durationMs),
    requests: n(client.requests),
    rateLimited: n(client.rateLimited),
    retries: n(client.retries),
    records: Array.isArray(s.streams)
      ? streams.reduce((a, x) => a + (typeof x.records === 'number' ? x.records : 0), 0)
      : null,
  };
}

/** A data test's result as shown: pass, fail, warn (a failing warn-level test) or error (its query failed). */
export function testResult(t: ReportData['tests'][number]): string {
  return t.status === 'pass' ? 'pass' : t.status === 'error' ? 'error' : t.severity === 'warn' ? 'warn' : 'fail';
}

const statusCell = (status: string): { html: string; className: string } => ({
  html: esc(status),
  className: `status-${status.replace(/[^a-z]/g, '')}`,
});

export async function dataHealthPage(data: ReportData, ctx: PageContext): Promise<string> {
  const parts: string[] = [];
  const last = data.runs[0] ?? null;
  const failing = data.tests.filter((t) => t.status !== 'pass');
  const errors = failing.filter((t) => t.severity === 'error');
  parts.push(
    tiles([
      {
        label: 'Last run',
        value: last ? runStatus(last, data) : 'none',
        note: last ? `started ${formatTime(last.startedAt)}` : 'no sync has run',
      },
      {
        label: 'Data tests',
        value: `${formatCount(data.tests.length - failing.length)} of ${formatCount(data.tests.length)} pass`,
        note: `${formatCount(errors.length)} failing, ${formatCount(failing.length - errors.length)} warnings`,
      },
      { label: 'Quarantined records', value: formatCount(data.quarantined), note: 'records that could not be typed' },
    ]),
  );

  parts.push(
    section(
      'runs',
      'Last runs',
      'The newest syncs first, with what each one did and, for one that did not succeed, why.',
      data.runs.length === 0
        ? empty('runs', 'No run recorded.', ' No sync has run against this warehouse yet.')
        : table({
            id: 'runs',
            caption: 'Last runs',
            columns: [
              { label: 'Run' },
              { label: 'Status' },
              { label: 'Started' },
              { label: 'Duration', numeric: true },
              { label: 'Requests', numeric: true },
              { label: '429s', numeric: true },
              { label: 'Retries', numeric: true },
              { label: 'Records', numeric: true },
              { label: 'Why it did not succeed' },
            ],
            rows: data.runs.map((r) => {
              const n = runNumbers(r);
              return [
                r.runId,
                statusCell(runStatus(r, data)),
                formatTime(r.startedAt),
                formatDuration(n.durationMs),
                formatCount(n.requests),
                formatCount(n.rateLimited),
                formatCount(n.retries),
                formatCount(n.records),
                runWhy(r, data),
              ];
            }),
          }),
    ),
  );

  const finished = lastFinishedRun(data.runs);
  const streams = runStreams(finished);
  if (finished && streams.length > 0) {
    parts.push(
      figure(
        'stream-records',
        'Records per stream',
        `What each stream read in run ${esc(finished.runId)} (${esc(finished.status)}).`,
        await renderChart(
          barSpec({
            description: 'Records read per stream in the last finished run.',
            values: streams.map((s) => ({
              label: String(s.stream),
              value: typeof s.records === 'number' ? s.records : 0,
            })),
            labelTitle: 'Stream',
            valueTitle: 'Records',
          }),
        ),
        table({
          id: 'stream-records',
          caption: `Streams of run ${finished.runId}`,
          columns: [
            { label: 'Stream' },
            { label: 'Status' },
            { label: 'Records', numeric: true },
            { label: 'Pages', numeric: true },
            { label: 'Deleted', numeric: true },
            { label: 'Quarantined', numeric: true },
            { label: 'Note' },
          ],
          rows: streams.map((s) => [
            String(s.stream),
            statusCell(String(s.status)),
            formatCount(typeof s.records === 'number' ? s.records : null),
            formatCount(typeof s.pages === 'number' ? s.pages : null),
            formatCount(typeof s.deleted === 'number' ? s.deleted : null),
            formatCount(typeof s.quarantined === 'number' ? s.quarantined : null),
            typeof s.reason === 'string' ? s.reason : '',
          ]),
        }),
      ),
    );
  }

  // The failing ones in view; the passes (hundreds) folded away beneath them.
  const testTable = (id: string, caption: string, tests: typeof data.tests): string =>
    table({
      id,
      caption,
      columns: [
        { label: 'Test' },
        { label: 'Severity' },
        { label: 'Result' },
        { label: 'Failing rows', numeric: true },
      ],
      rows: tests.map((t) => [
        t.name,
        t.severity,
        statusCell(testResult(t)),
        t.status === 'error' ? `query failed: ${t.message ?? 'unknown error'}` : formatCount(t.failing),
      ]),
    });
  const passed = data.tests.filter((t) => t.status === 'pass');
  parts.push(
    section(
      'data-tests',
      'Data tests',
      'Run against the warehouse as it is now: generated checks (unique keys, not null, references resolve, accepted ' +
        'values) and the money reconciliations of <code>models/tests/</code>. A failing test counts the rows that fail it.',
      (failing.length === 0
        ? empty('data-tests', `All ${formatCount(data.tests.length)} data tests pass.`, ' No test finds a failing row.')
        : testTable('data-tests-failing', 'Data tests that fail, warn or could not run', failing)) +
        (passed.length > 0
          ? `<details><summary>${formatCount(passed.length)} tests pass</summary>${testTable('data-tests-passed', 'Data tests that pass', passed)}</details>`
          : ''),
    ),
  );

  parts.push(
    section(
      'quarantine',
      'Quarantined records',
      'Records that could not be typed (no key, an id out of range, a timestamp that matters but cannot be read), kept ' +
        'in <code>_grantflow_quarantine</code> with the reason so nothing is dropped silently.',
      data.quarantine.length === 0
        ? empty('quarantine', 'No record is quarantined.', ' Every record read so far could be typed.')
        : table({
            id: 'quarantine',
            caption: 'Quarantined records by stream and reason',
            columns: [{ label: 'Stream' }, { label: 'Reason' }, { label: 'Records', numeric: true }],
            rows: data.quarantine.map((q) => [q.stream, q.reason, formatCount(q.records)]),
          }),
    ),
  );

  parts.push(
    section(
      'freshness',
      'Freshness',
      `When each stream was last read whole, and how long before this report (built ${esc(formatTime(data.builtAt))}).`,
      data.streams.length === 0
        ? empty('freshness', 'No stream has been read yet.', ' The warehouse records no stream state.')
        : table({
            id: 'freshness',
            caption: 'Last complete read of each stream',
            columns: [
              { label: 'Stream' },
              { label: 'Last complete read' },
              { label: 'Age', numeric: true },
              { label: 'Records', numeric: true },
              { label: 'Last full refresh' },
            ],
            rows: data.streams.map((s) => [
              s.stream,
              formatTime(s.lastCompleteAt),
              s.lastCompleteAt ? formatAge(s.lastCompleteAt, data.builtAt) : unknownText,
              formatCount(s.records),
              formatTime(s.lastFullRefreshAt),
            ]),
          }),
    ),
  );

  return page(
    'data-health.html',
    'Data health',
    'Whether the figures can be trusted: the last syncs, the data tests, what could not be loaded, and how fresh each stream is.',
    parts.join('\n'),
    ctx,
  );
}
