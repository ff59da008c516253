import { parse } from 'csv-parse/sync';

/** A report file read as CSV: its header row and its data rows, every cell as text. */
export interface ReportCsv {
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/**
 * Reads a report download as RFC 4180 CSV with a header row (csv-parse): quoted fields, doubled quotes, newlines
 * inside quotes, CRLF or LF, and a UTF-8 byte-order mark. Rows may be shorter or longer than the header (the
 * mapping keys what it can; see report-downloads mapping). Blank lines carry no row. Throws on text that is not CSV
 * (an unclosed quote, a quote inside an unquoted field), with csv-parse's message naming the line.
 */
export function parseReportCsv(text: string): ReportCsv {
  const records = parse(text, {
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
  }) as string[][];
  const [header, ...rows] = records;
  return { header: header ?? [], rows };
}
