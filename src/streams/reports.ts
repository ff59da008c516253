import { col, enumCol, id, ref, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const reports = defineStream({
  name: 'reports',
  path: '/api/reports/',
  description: 'Report definitions and their generation status (spec 4.12.1; needs `Reports`).',
  skipOn: { 403: 'needs the `Reports` permission' },
  table: {
    name: 'reports',
    kind: 'entity',
    description: 'Report definitions and their generation status (GET /api/reports/).',
    primaryKey: ['id'],
    columns: [
      id('Report id.'),
      col('name', 'text', 'Report name (unique).'),
      enumCol(
        'source',
        'report_source',
        'What the report lists (enum report_source: 0 Applications, 1 Reviews, 2 Recommendations, 3 Users).',
      ),
      enumCol(
        'status',
        'report_status',
        'Generation status (enum report_status: 0 Created ... 3 Generated, 4 Error, 5 Canceled).',
      ),
      ref('program_id', 'programs', 'Program of the report (NULL for user reports).'),
      ref('created_by_id', 'users', 'User who created the report.'),
      tsCol('created_at', 'When the report was created'),
      tsCol('last_generated_at', 'When it was last generated; NULL when never (the API sends a blank)'),
      col('columns', 'json', 'Report variables (JSON array of strings).'),
      col('filter', 'json', 'Filter object {type, items[]} as sent.'),
      col('download_link', 'text', 'Download link; blank when there is nothing to download.'),
      col('report_filename', 'text', 'File name of the generated report.'),
      col('file_size', 'bigint', 'Size of the generated file in bytes.', { read: 'long' }),
      col('job_id', 'text', 'Id of the generating job; blank when nothing is being generated.'),
      col('current_row', 'integer', 'Row being generated (API field `row`).', { source: 'row' }),
      col('total_rows', 'integer', 'Rows in the report.'),
      col('last_error_message', 'text', 'Last generation error.'),
    ],
  },
  // A report gone from the list takes its downloaded file's rows with it.
  cascades: ['report_columns', 'report_rows'].map((table) => ({
    table,
    column: 'report_id',
    parentTable: 'reports',
    parentColumn: 'id',
  })),
});
