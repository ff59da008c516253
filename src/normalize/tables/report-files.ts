import type { TableDef } from '../table-def.ts';
import { col, ref, req, tsCol } from './columns.ts';

/** Provenance of a downloaded file, on each of its rows: which generation of the report, fetched when. */
const provenance = [
  tsCol(
    'last_generated_at',
    "The report's last_generated_at when its file was downloaded: the generation these rows are of",
  ),
  tsCol('downloaded_at', 'When the file was downloaded'),
] as const;

export const reportColumns: TableDef = {
  name: 'report_columns',
  kind: 'bridge',
  description:
    "Columns of each generated report's downloaded file (GET /api/reports/{id}/download/): its header row, in order.",
  primaryKey: ['report_id', 'position'],
  columns: [
    ref('report_id', 'reports', 'Report.', true),
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
};

export const reportRows: TableDef = {
  name: 'report_rows',
  kind: 'bridge',
  description:
    "Rows of each generated report's downloaded file, one per data row (CSV). A report is downloaded again only when its last_generated_at moves; rows a new file no longer has are soft-deleted.",
  primaryKey: ['report_id', 'row_number'],
  columns: [
    ref('report_id', 'reports', 'Report.', true),
    req(
      'row_number',
      'integer',
      'Position of the row among the data rows of the file, from 1 (the header row is not counted).',
    ),
    col(
      'data',
      'json',
      'The row as a JSON object keyed by report_columns.row_key, every cell as text; a cell beyond the header is keyed `(col N)`, a cell a short row lacks is absent.',
    ),
    ...provenance,
  ],
};
