/**
 * Issue 44: what a hostile site sends is bounded. The drift catalog keeps at most so many paths per stream and run (and
 * stored), and no path longer than its bound, counting what it leaves out; a fan-out checkpoint is due by the
 * characters it holds too; a record nested past the depth bound is quarantined with its reason; a report column
 * headed `__proto__` keeps its cells.
 */
import { describe, expect, it } from 'vitest';
import { maxPathChars, maxPathsPerStream, UnknownFields } from '../../src/extract/unknown-fields.ts';
import { maxStoredPathsPerStream, mergeUnknownFields } from '../../src/pipeline/drift-catalog.ts';
import { formatSummary } from '../../src/pipeline/summary.ts';
import { checkpointChars, checkpointDue } from '../../src/extract/fan-out-stream.ts';
import { RowBatcher } from '../../src/extract/row-batcher.ts';
import { maxRecordDepth } from '../../src/normalize/index.ts';
import { reportFileLanding } from '../../src/extract/report-file.ts';
import { reportDownloadsStream } from '../../src/streams/report-downloads.ts';
import type { UnknownFieldRow } from '../../src/warehouse/unknown-field-row.ts';
import { defaultCatalog } from '../../src/streams/registry.ts';
import type { JsonObject } from '../../src/util/json.ts';

describe('the drift catalog of a run', () => {
  it('keeps at most maxPathsPerStream paths per stream, none longer than maxPathChars, and counts the rest', () => {
    const catalog = new UnknownFields();
    const apps = catalog.observer('applications');
    const funds = catalog.observer('funds');
    const records = 3;
    for (let r = 0; r < records; r++) {
      apps.startRecord();
      for (let k = 0; k < maxPathsPerStream; k++) apps.unmapped(`f${r}_${k}`, k);
      apps.unmapped('x'.repeat(maxPathChars + 1), 1);
    }
    funds.startRecord();
    funds.unmapped('y'.repeat(maxPathChars + 1), 1);
    funds.unmapped('extra.score', 1);

    const listed = catalog.list();
    expect(listed.filter((s) => s.stream === 'applications')).toHaveLength(maxPathsPerStream);
    expect(listed.filter((s) => s.stream === 'funds').map((s) => s.path)).toEqual(['extra.score']);
    expect(listed.every((s) => s.path.length <= maxPathChars)).toBe(true);
    // Counted once per record, whatever it left out of it.
    expect(catalog.overflow()).toEqual({ records: records + 1, streams: ['applications', 'funds'] });
  });

  it('has nothing left out while a site stays within the bounds', () => {
    const catalog = new UnknownFields();
    const obs = catalog.observer('applications');
    obs.startRecord();
    obs.unmapped('extra.score', 1);
    expect(catalog.overflow()).toBeUndefined();
  });

  it('stores at most maxStoredPathsPerStream paths per stream across runs', () => {
    const stored: UnknownFieldRow[] = Array.from({ length: maxStoredPathsPerStream }, (_, i) => ({
      stream: 'applications',
      path: `old${i}`,
      kind: 'unmapped',
      json_types: 'number',
      records_seen: 1,
      example: '1',
      first_run_id: 'r0',
      last_run_id: 'r0',
      first_seen_at: '2026-01-01T00:00:00Z',
      last_seen_at: '2026-01-01T00:00:00Z',
    }));
    const seen = [
      {
        stream: 'applications',
        path: 'old0',
        kind: 'unmapped' as const,
        types: new Set(['number']),
        records: 2,
        example: '1',
      },
      {
        stream: 'applications',
        path: 'new',
        kind: 'unmapped' as const,
        types: new Set(['number']),
        records: 5,
        example: '1',
      },
      { stream: 'funds', path: 'new', kind: 'unmapped' as const, types: new Set(['number']), records: 1, example: '1' },
    ];
    const { rows, newPaths, overflow } = mergeUnknownFields(stored, seen, 'r1', '2026-01-02T00:00:00Z');
    expect(rows.map((r) => `${r.stream}.${r.path}`)).toEqual(['applications.old0', 'funds.new']);
    expect(newPaths).toBe(1);
    expect(overflow).toEqual({ records: 5, streams: ['applications'] });
  });

  it('is said in one line of the summary', () => {
    const text = formatSummary({
      runId: 'r1',
      status: 'succeeded',
      resumed: false,
      streams: [],
      client: { requests: 1, byStatus: {}, retries: 0, rateLimited: 0, refreshes: 0, bytes: 0 },
      durationMs: 1000,
      drift: { newPaths: 0, unmapped: 0, retyped: 0, overflow: { records: 7, streams: ['applications'] } },
    });
    expect(text.split('\n').filter((l) => l.includes('not catalogued'))).toEqual([
      `  schema drift beyond the catalog's bounds: 7 records of applications held fields not catalogued (over ${maxPathsPerStream} new paths per stream and run, or paths over ${maxPathChars} characters)`,
    ]);
  });
});

describe('a fan-out checkpoint', () => {
  const options = { checkpointParents: 200, checkpointSeconds: 20 };
  it('is due by the characters of the pages held, as by parents and time', () => {
    expect(checkpointDue(options, 1, checkpointChars - 1, 0)).toBe(false);
    expect(checkpointDue(options, 1, checkpointChars, 0)).toBe(true);
    expect(checkpointDue({ ...options, checkpointChars: 10 }, 1, 10, 0)).toBe(true);
    expect(checkpointDue(options, 200, 0, 0)).toBe(true);
    expect(checkpointDue(options, 1, 0, 20_000)).toBe(true);
  });
});

/** `{"a": {"a": ... 1}}`, `depth` objects deep, built without recursion. */
function nested(depth: number): JsonObject {
  let v: JsonObject = { a: 1 };
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

describe('a record nested too deep', () => {
  it('is quarantined with its reason and its shallow part; the records beside it load', () => {
    const batcher = new RowBatcher('programs', {
      catalog: defaultCatalog,
      runId: 'r1',
      extractedAt: '2026-01-01T00:00:00Z',
      siteTimeZone: 'UTC',
    });
    const deep = { id: 2, name: 'deep', deep: nested(6000) };
    const shallow = { id: 3, name: 'ok', deep: nested(maxRecordDepth - 1) };
    batcher.add([{ id: 1, name: 'plain' }, deep, shallow]);
    const rows = batcher.drain();
    const quarantine = rows.find((b) => b.table === '_grantflow_quarantine')?.rows ?? [];
    expect(quarantine.map((r) => r.reason)).toEqual([
      `record quarantined: the record nests more than ${maxRecordDepth} levels deep`,
    ]);
    const payload = JSON.parse(String(quarantine[0]!.payload)) as JsonObject;
    expect(payload).toMatchObject({ id: 2, name: 'deep' });
    expect(batcher.counts).toMatchObject({ records: 3, quarantined: 1 });
    expect(rows.find((b) => b.table === 'programs')?.rows.map((r) => r.id)).toEqual([1, 3]);
  });
});

describe('a report CSV', () => {
  it('keeps the cells of a column headed __proto__', () => {
    const text = 'id,__proto__,constructor\r\n1,polluted,c1\r\n';
    const { record } = reportFileLanding(
      9,
      { last_generated_at: '2026-01-02T03:04:05Z', columns: [] },
      {
        bytes: Buffer.from(text, 'utf8'),
        contentType: 'text/csv',
        url: 'http://site/api/reports/9/download/',
        status: 200,
        fetchedAt: '2026-02-01T00:00:00.000Z',
      },
    );
    const rows = reportDownloadsStream.map(record, { parentId: 9, siteTimeZone: 'UTC' });
    const data = rows.filter((r) => r.table === 'report_rows').map((r) => JSON.parse(String(r.row.data)) as object);
    expect(data.map((d) => Object.entries(d))).toEqual([
      [
        ['id', '1'],
        ['__proto__', 'polluted'],
        ['constructor', 'c1'],
      ],
    ]);
  });
});
