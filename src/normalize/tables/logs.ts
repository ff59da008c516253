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
