import { arr, cleanText, ts } from '../coerce.ts';
import type { MappedRow, StreamMapping } from '../mapping.ts';
import { parentId } from '../refs.ts';
import type { Row } from '../table-def.ts';

/**
 * A report's downloaded file (one record per file, built by extract/report-file.ts) as report_columns and
 * report_rows. A file of another format than CSV has no rows: its record only says what it was (the file is kept
 * under the raw landing), and the rows of the report's earlier file go, as for any complete walk of a parent.
 */
export const reportDownloadsStream: StreamMapping = {
  owns: [
    { table: 'report_columns', parentColumn: 'report_id' },
    { table: 'report_rows', parentColumn: 'report_id' },
  ],
  cascades: [],
  map(r, ctx) {
    const reportId = parentId(ctx, 'report_downloads');
    if (r.format !== 'csv') return [];
    const z = ctx.siteTimeZone;
    const provenance: Row = {
      last_generated_at: ts(r.last_generated_at, z),
      downloaded_at: ts(r.downloaded_at, 'UTC'),
    };
    const header = arr(r.header).map((h) => cleanText(String(h)));
    const variables = arr(r.columns);
    const keys = rowKeys(header);
    const out: MappedRow[] = header.map((h, i) => {
      const variable = variables.length === header.length ? variables[i] : null;
      return {
        table: 'report_columns',
        row: {
          report_id: reportId,
          position: i + 1,
          header: h,
          row_key: keys[i]!,
          variable: typeof variable === 'string' ? variable : null,
          ...provenance,
          _raw: JSON.stringify({ header: h, variable: variable ?? null }),
        },
        merge: 'replace',
      };
    });
    arr(r.rows).forEach((cells, n) => {
      const values = arr(cells).map((c) => cleanText(String(c)));
      const data: Record<string, string> = {};
      values.forEach((v, i) => (data[keys[i] ?? `(col ${i + 1})`] = v));
      out.push({
        table: 'report_rows',
        row: {
          report_id: reportId,
          row_number: n + 1,
          data: JSON.stringify(data),
          ...provenance,
          _raw: JSON.stringify(values),
        },
        merge: 'replace',
      });
    });
    return out;
  },
};

/**
 * Keys of a row object built from a header: the header text itself, with a repeated header (or an empty one) made
 * unique by its position (`Score (col 5)`, `(col 3)`), so no cell of a row overwrites another.
 */
export function rowKeys(header: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const h of header) counts.set(h, (counts.get(h) ?? 0) + 1);
  return header.map((h, i) => (h !== '' && counts.get(h) === 1 ? h : `${h}${h === '' ? '' : ' '}(col ${i + 1})`));
}
