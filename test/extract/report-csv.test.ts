import { describe, expect, it } from 'vitest';
import { parseReportCsv } from '../../src/extract/report-csv.ts';
import { classifyReportFile, reportFileLanding } from '../../src/extract/report-file.ts';
import { reportDownloadsStream, rowKeys } from '../../src/streams/report-downloads.ts';

describe('parseReportCsv', () => {
  it('drops a UTF-8 byte-order mark from the first header', () => {
    const csv = parseReportCsv('\uFEFFApplication System ID,Title\r\n1,Water\r\n');
    expect(csv.header).toEqual(['Application System ID', 'Title']);
    expect(csv.rows).toEqual([['1', 'Water']]);
  });

  it('reads quoted fields with commas, doubled quotes and embedded newlines (LF and CRLF)', () => {
    const text = 'id,note,city\n7,"He said ""no"", then left","Zürich"\n8,"line one\nline two\r\nline three",東京\n';
    const csv = parseReportCsv(text);
    expect(csv.rows).toEqual([
      ['7', 'He said "no", then left', 'Zürich'],
      ['8', 'line one\nline two\r\nline three', '東京'],
    ]);
  });

  it('keeps rows shorter or longer than the header, and empty cells as empty text', () => {
    const csv = parseReportCsv('a,b,c\n1,,3\n4\n5,6,7,8\n');
    expect(csv.rows).toEqual([['1', '', '3'], ['4'], ['5', '6', '7', '8']]);
  });

  it('has no rows for a file with only a header, and nothing for an empty file', () => {
    expect(parseReportCsv('a,b\r\n')).toEqual({ header: ['a', 'b'], rows: [] });
    expect(parseReportCsv('')).toEqual({ header: [], rows: [] });
  });

  it('refuses text with an unclosed quote, naming where', () => {
    expect(() => parseReportCsv('a,b\n1,"never closed\n')).toThrow(/quote/i);
  });
});

describe('classifyReportFile', () => {
  const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');

  it('reads CSV when the Content-Type says CSV or says nothing specific', () => {
    expect(classifyReportFile(bytes('a,b\n1,2\n'), 'text/csv; charset=utf-8').kind).toBe('csv');
    expect(classifyReportFile(bytes('a,b\n1,2\n'), 'application/octet-stream').kind).toBe('csv');
    expect(classifyReportFile(bytes('\uFEFFa,b\n1,2\n'), null).kind).toBe('csv');
  });

  it('says what another format is', () => {
    const xlsx = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(40, 1)]);
    expect(classifyReportFile(xlsx, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')).toEqual({
      kind: 'other',
      what: 'a ZIP container such as XLSX (application/vnd.openxmlformats-officedocument.spreadsheetml.sheet)',
    });
    expect(classifyReportFile(bytes('%PDF-1.7 ...'), 'application/octet-stream')).toEqual({
      kind: 'other',
      what: 'a PDF document',
    });
    expect(classifyReportFile(bytes('[{"id": 1}]'), null)).toEqual({ kind: 'other', what: 'JSON' });
    expect(classifyReportFile(bytes('{}'), 'application/json')).toEqual({
      kind: 'other',
      what: 'Content-Type application/json',
    });
    expect(classifyReportFile(Buffer.from([0xff, 0xfe, 0x41, 0x00]), null).kind).toBe('other');
    expect(classifyReportFile(bytes('a,"b\n'), 'text/plain')).toMatchObject({ kind: 'other' });
  });
});

describe('report file rows', () => {
  it('keys each cell by its header, making repeated and empty headers unique by position', () => {
    expect(rowKeys(['Name', 'Score', 'Score', ''])).toEqual(['Name', 'Score (col 2)', 'Score (col 3)', '(col 4)']);
  });

  it('maps a downloaded CSV to report_columns and report_rows with its variables and provenance', () => {
    const text = '\uFEFFApplication System ID,Application Title\r\n1,"Clean ""water"", now"\r\n2,"two\nlines ✓"\r\n';
    const { record, line } = reportFileLanding(
      9,
      { last_generated_at: '2026-01-02T03:04:05Z', columns: ['application.id', 'application.title'] },
      {
        bytes: Buffer.from(text, 'utf8'),
        contentType: 'text/csv',
        url: 'http://site/api/reports/9/download/',
        status: 200,
        fetchedAt: '2026-02-01T00:00:00.000Z',
      },
    );
    expect(line).toMatchObject({ type: 'page', parentId: 9, file: { encoding: 'utf8' }, body: text });
    const rows = reportDownloadsStream.map(record, { parentId: 9, siteTimeZone: 'UTC' });
    expect(rows.filter((r) => r.table === 'report_columns').map((r) => [r.row.header, r.row.variable])).toEqual([
      ['Application System ID', 'application.id'],
      ['Application Title', 'application.title'],
    ]);
    const data = rows.filter((r) => r.table === 'report_rows').map((r) => JSON.parse(String(r.row.data)) as unknown);
    expect(data).toEqual([
      { 'Application System ID': '1', 'Application Title': 'Clean "water", now' },
      { 'Application System ID': '2', 'Application Title': 'two\nlines ✓' },
    ]);
    expect(rows[0]!.row).toMatchObject({
      last_generated_at: '2026-01-02T03:04:05Z',
      downloaded_at: '2026-02-01T00:00:00Z',
    });
  });

  it('leaves the variable unknown when the file has not as many columns as the report', () => {
    const { record } = reportFileLanding(
      3,
      { last_generated_at: '2026-01-02T03:04:05Z', columns: ['user.id'] },
      { bytes: Buffer.from('A,B\n1,2\n'), contentType: null, url: 'u', status: 200, fetchedAt: '2026-02-01T00:00:00Z' },
    );
    const cols = reportDownloadsStream.map(record, { parentId: 3, siteTimeZone: 'UTC' });
    expect(cols.filter((r) => r.table === 'report_columns').map((r) => r.row.variable)).toEqual([null, null]);
  });

  it('lands another format as base64 of its exact bytes, with no rows', () => {
    const bytes = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x2d, 0x00, 0xff]);
    const { line, record, format } = reportFileLanding(
      4,
      { last_generated_at: '2026-01-02T03:04:05Z', columns: [] },
      { bytes, contentType: 'application/pdf', url: 'u', status: 200, fetchedAt: '2026-02-01T00:00:00Z' },
    );
    expect(format.kind).toBe('other');
    expect(line.type === 'page' && Buffer.from(line.body, 'base64').equals(bytes)).toBe(true);
    expect(reportDownloadsStream.map(record, { parentId: 4, siteTimeZone: 'UTC' })).toEqual([]);
  });
});
