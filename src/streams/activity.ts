import { sourceFields } from '../normalize/source-fields.ts';
import { activityStream } from '../normalize/streams/reviews.ts';
import * as tables from '../normalize/tables/logs.ts';
import { defineStream } from './stream-definition.ts';

export const activity = defineStream({
  name: 'activity',
  path: '/api/activity/',
  description: 'Activity items visible to the caller (spec 4.1), newest first.',
  mode: 'append_newest_first',
  table: tables.activity,
  mapping: activityStream,
  fields: sourceFields.activity,
});
