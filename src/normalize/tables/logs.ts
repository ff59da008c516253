import type { TableDef } from '../table-def.ts';
import { col, enumCol, id, ref, tsCol } from './columns.ts';

export const reports: TableDef = {
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
    col('file_size', 'bigint', 'Size of the generated file in bytes.'),
    col('job_id', 'text', 'Id of the generating job; blank when nothing is being generated.'),
    col('current_row', 'integer', 'Row being generated (API field `row`).'),
    col('total_rows', 'integer', 'Rows in the report.'),
    col('last_error_message', 'text', 'Last generation error.'),
  ],
};
