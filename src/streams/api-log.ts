import { sourceFields } from '../normalize/source-fields.ts';
import { apiLogStream } from '../normalize/streams/reviews.ts';
import * as tables from '../normalize/tables/logs.ts';
import { defineStream } from './stream-definition.ts';

export const apiLog = defineStream({
  name: 'api_log',
  path: '/api/log/',
  description: 'Log of API calls (spec 4.7), newest first.',
  mode: 'append_newest_first',
  skipOn: { 403: 'the API call log is not visible to this user' },
  table: tables.apiLog,
  mapping: apiLogStream,
  fields: sourceFields.api_log,
});
