import type { JsonObject, JsonValue } from '../util/json.ts';
import { redact } from '../util/redact.ts';
import type { DownloadedFile } from '../source/types.ts';
import { GrantflowError } from '../util/errors.ts';
import type { RawLine } from './raw-landing.ts';
import { parseReportCsv } from './report-csv.ts';
import { reportFileContext, type ReportFileContext } from '../streams/report-file-marker.ts';

/** A download, classified: CSV text (redacted), or another format the file is kept raw for. */
export type ReportFileFormat =
  { readonly kind: 'csv'; readonly text: string } | { readonly kind: 'other'; readonly what: string };

/** Content types that say nothing of the format: the bytes decide. */
const genericTypes = new Set([
  '',
  'text/plain',
  'application/octet-stream',
  'binary/octet-stream',
  'application/force-download',
  'application/download',
  'application/vnd.ms-excel',
]);
const csvTypes = new Set(['text/csv', 'application/csv', 'text/comma-separated-values', 'text/x-csv']);

/**
 * The spec does not show the download's format. CSV is read when the Content-Type says CSV, or says nothing specific
 * and the bytes are UTF-8 text that parses as CSV; anything else (a ZIP such as XLSX, a PDF, JSON, binary data,
 * text that is not CSV) is another format, said so and kept raw.
 */
export function classifyReportFile(bytes: Buffer, contentType: string | null): ReportFileFormat {
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (bytes.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1')))
    return { kind: 'other', what: `a ZIP container such as XLSX (${mime || 'no Content-Type'})` };
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return { kind: 'other', what: 'a PDF document' };
  if (!csvTypes.has(mime) && !genericTypes.has(mime)) return { kind: 'other', what: `Content-Type ${mime}` };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { kind: 'other', what: `bytes that are not UTF-8 text (${mime || 'no Content-Type'})` };
  }
  if (text.includes('\u0000')) return { kind: 'other', what: `binary data (${mime || 'no Content-Type'})` };
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (!csvTypes.has(mime) && (start.startsWith('{') || start.startsWith('['))) {
    try {
      JSON.parse(start);
      return { kind: 'other', what: 'JSON' };
    } catch {
      // Not JSON: a CSV whose first header starts with a bracket.
    }
  }
  try {
    parseReportCsv(text);
  } catch (error) {
    return { kind: 'other', what: `text that is not CSV (${error instanceof Error ? error.message : String(error)})` };
  }
  // A report may echo what a caller typed, a token included: scrubbed as every page is.
  return { kind: 'csv', text: redact(text) };
}

/**
 * A download as its raw line (landed before its rows commit; the file whole, so nothing is lost) and the one record
 * it becomes (the report_downloads mapping turns that into report_columns and report_rows).
 */
export function reportFileLanding(
  reportId: number,
  context: ReportFileContext,
  file: DownloadedFile & { readonly url: string; readonly status: number; readonly fetchedAt: string },
): { line: RawLine; record: JsonObject; format: ReportFileFormat } {
  const format = classifyReportFile(file.bytes, file.contentType);
  const line: RawLine = {
    type: 'page',
    url: file.url,
    status: file.status,
    fetchedAt: file.fetchedAt,
    parentId: reportId,
    file: {
      contentType: file.contentType,
      encoding: format.kind === 'csv' ? 'utf8' : 'base64',
      context: { ...context, columns: [...context.columns] },
    },
    body: format.kind === 'csv' ? format.text : file.bytes.toString('base64'),
  };
  return { line, record: fileRecord(reportId, format, context, file.fetchedAt, file.bytes.length), format };
}

/** The record of a landed download (a replay), built as the sync built it. */
export function landedReportFileRecords(line: Extract<RawLine, { type: 'page' }>): JsonObject[] {
  if (!line.file || line.parentId === undefined)
    throw new GrantflowError(`raw line of ${line.url} is not a report download (no file or report id)`);
  const bytes = Buffer.from(line.body, line.file.encoding);
  const context = reportFileContext(JSON.stringify(line.file.context));
  if (!context) throw new GrantflowError(`raw line of ${line.url} names no last_generated_at of its report`);
  const format = classifyReportFile(bytes, line.file.contentType);
  return [fileRecord(line.parentId, format, context, line.fetchedAt, bytes.length)];
}

function fileRecord(
  reportId: number,
  format: ReportFileFormat,
  context: ReportFileContext,
  fetchedAt: string,
  size: number,
): JsonObject {
  const base: JsonObject = {
    report_id: reportId,
    last_generated_at: context.last_generated_at,
    columns: [...context.columns],
    downloaded_at: fetchedAt,
    size,
  };
  if (format.kind === 'other') return { ...base, format: 'other', format_problem: format.what };
  const csv = parseReportCsv(format.text);
  return { ...base, format: 'csv', header: [...csv.header], rows: csv.rows.map((r): JsonValue[] => [...r]) };
}
