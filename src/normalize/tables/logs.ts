import type { TableDef } from '../table-def.ts';
import { col, enumCol, id, ref, req, tsCol } from './columns.ts';

export const activity: TableDef = {
  name: 'activity',
  kind: 'entity',
  description:
    'Activity items (GET /api/activity/). Items without an id get a stable synthetic negative id derived from their actor, time, type and references (see id_synthetic).',
  primaryKey: ['id'],
  columns: [
    id(
      'Activity id; when the API sends none, -(1 + first 52 bits of sha256 of actor/created_at/type/category/role/reference ids).',
    ),
    req('id_synthetic', 'boolean', 'True when id was derived because the API sent no id.'),
    ref('actor_id', 'users', 'User who acted.'),
    enumCol('actor_role', 'actor_role', 'Role the actor acted in (admin, reviewer).', 'text'),
    col('type', 'text', 'Kind of activity.'),
    col('category', 'boolean', 'Category flag (a boolean in the API).'),
    tsCol('created_at', 'When it happened'),
    ref('application_id', 'applications', 'Application concerned.'),
    ref('program_id', 'programs', 'Program concerned.'),
    ref('stage_id', 'stages', 'Stage concerned.'),
    ref('task_id', 'tasks', 'Task concerned.'),
    ref('organization_id', 'organizations', 'Organization concerned.'),
  ],
};

export const apiLog: TableDef = {
  name: 'api_log',
  kind: 'entity',
  description: 'Log of API calls made on the site (GET /api/log/).',
  primaryKey: ['id'],
  columns: [
    id('Log entry id.'),
    tsCol('logged_at', 'When the call was made (API field `timestamp`)'),
    ref('actor_id', 'users', 'User who made the call.'),
    enumCol('role', 'user_role', 'Role of the caller (applicant, recommender, reviewer, admin).', 'text'),
    enumCol('method', 'http_method', 'HTTP method.', 'text'),
    col('url', 'text', 'Endpoint called.'),
    enumCol('status_code', 'http_status', 'HTTP status returned.'),
    col('elapsed', 'double', 'Processing time in milliseconds.'),
    col('object_id', 'bigint', 'Id of the returned object (table depends on the endpoint).'),
    col('parent_id', 'bigint', 'Id of the parent object (table depends on the endpoint).'),
    col('info', 'json', 'Endpoint-specific data (JSON object).'),
  ],
};

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
