import { col, enumCol, freeText, id, ref, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const apiLog = defineStream({
  name: 'api_log',
  path: '/api/log/',
  description: 'Log of API calls (spec 4.7), newest first.',
  mode: 'append_newest_first',
  skipOn: { 403: 'the API call log is not visible to this user' },
  table: {
    name: 'api_log',
    kind: 'entity',
    description: 'Log of API calls made on the site (GET /api/log/).',
    primaryKey: ['id'],
    columns: [
      id('Log entry id.'),
      tsCol('logged_at', 'When the call was made (API field `timestamp`)', { source: 'timestamp', read: 'strictTs' }),
      ref('actor_id', 'users', 'User who made the call.'),
      enumCol('role', 'user_role', 'Role of the caller (applicant, recommender, reviewer, admin).', 'text'),
      enumCol('method', 'http_method', 'HTTP method.', 'text'),
      col('url', 'text', 'Endpoint called.'),
      enumCol('status_code', 'http_status', 'HTTP status returned.'),
      col('elapsed', 'double', 'Processing time in milliseconds.'),
      col('object_id', 'bigint', 'Id of the returned object (table depends on the endpoint).'),
      col('parent_id', 'bigint', 'Id of the parent object (table depends on the endpoint).'),
      col('info', 'json', 'Endpoint-specific data (JSON object).', freeText),
    ],
  },
});
