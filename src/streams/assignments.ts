import { byRefs } from '../extract/stream-def.ts';
import { sourceFields } from '../normalize/source-fields.ts';
import { assignmentsStream } from '../normalize/streams/reviews.ts';
import * as tables from '../normalize/tables/applications.ts';
import { defineStream } from './stream-definition.ts';

export const assignments = defineStream({
  name: 'assignments',
  path: '/api/assignments/',
  description: 'Reviewer assignments (spec 4.3.1; needs `Assign reviews`).',
  keyOf: byRefs('application', 'reviewer', 'stage'),
  skipOn: { 403: 'needs the `Assign reviews` permission' },
  table: tables.assignments,
  mapping: assignmentsStream,
  fields: sourceFields.assignments,
});
