import { reportFileMarker, sameGeneration } from './report-file-marker.ts';
import { arr, cleanText, ts } from '../normalize/coerce.ts';
import type { MappedRow, StreamMapping } from '../normalize/mapping.ts';
import { parentId } from '../normalize/refs.ts';
import type { Row } from '../normalize/table-def.ts';
import { col, ref, req, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

/** Provenance of a downloaded file, on each of its rows: which generation of the report, fetched when. */
const provenance = [
  tsCol(
    'last_generated_at',
    "The report's last_generated_at when its file was downloaded: the generation these rows are of",
  ),
  tsCol('downloaded_at', 'When the file was downloaded'),
] as const;

/**
 * Keys of a row object built from a header: the header text itself, with a repeated header (or an empty one) made
 * unique by its position (`Score (col 5)`, `(col 3)`), so no cell of a row overwrites another.
 */
export function rowKeys(header: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const h of header) counts.set(h, (counts.get(h) ?? 0) + 1);
  return header.map((h, i) => (h !== '' && counts.get(h) === 1 ? h : `${h}${h === '' ? '' : ' '}(col ${i + 1})`));
}

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
      // No prototype: a header named `__proto__` is a key like any other, not the object's prototype.
      const data = Object.create(null) as Record<string, string>;
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

export const reportDownloads = defineStream({
  name: 'report_downloads',
  path: '/api/reports/{parent}/download/',
  description: 'The file of each generated report (spec 4.12.6), read again only when its last_generated_at moves.',
  keyOf: () => 'file',
  parent: { stream: 'reports', marker: reportFileMarker, unchanged: sameGeneration, idleWithoutMarker: true },
  shape: 'download',
  refreshOnlyWhenAsked: true,
  skipOn: { 403: 'needs the `Reports` permission' },
  // Built from a downloaded file (extract/report-file.ts), not a site resource: no drift to find, and its columns
  // come from the file's header and rows, so the mapping is written by hand.
  notFromSite: true,
  mapping: reportDownloadsStream,
  table: {
    name: 'report_columns',
    kind: 'bridge',
    description:
      "Columns of each generated report's downloaded file (GET /api/reports/{id}/download/): its header row, in order.",
    primaryKey: ['report_id', 'position'],
    columns: [
      ref('report_id', 'reports', 'Report.', { notNull: true }),
      req('position', 'integer', 'Position of the column in the file, from 1.'),
      col('header', 'text', 'Header text as in the file.'),
      col(
        'row_key',
        'text',
        "Key of this column's cells in report_rows.data: the header, or for a repeated or empty header the header with its position, `(col N)`.",
      ),
      col(
        'variable',
        'text',
        "Report variable (spec 2.19) the column came from: the report's columns entry at this position, when the file has as many columns as the report; NULL when not known.",
      ),
      ...provenance,
    ],
  },
  otherTables: [
    {
      name: 'report_rows',
      kind: 'bridge',
      description:
        "Rows of each generated report's downloaded file, one per data row (CSV). A report is downloaded again only when its last_generated_at moves; rows a new file no longer has are soft-deleted.",
      primaryKey: ['report_id', 'row_number'],
      columns: [
        ref('report_id', 'reports', 'Report.', { notNull: true }),
        req(
          'row_number',
          'integer',
          'Position of the row among the data rows of the file, from 1 (the header row is not counted).',
        ),
        col(
          'data',
          'json',
          'The row as a JSON object keyed by report_columns.row_key, every cell as text; a cell beyond the header is keyed `(col N)`, a cell a short row lacks is absent.',
          // A report's cells may be anything the site holds: names, emails, answers.
          { personal: 'identifier_and_free_text' },
        ),
        ...provenance,
      ],
    },
  ],
});
