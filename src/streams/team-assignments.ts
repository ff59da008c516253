import { byRefs } from '../extract/stream-def.ts';
import { sourceFields } from '../normalize/source-fields.ts';
import { teamAssignmentsStream } from '../normalize/streams/reviews.ts';
import * as tables from '../normalize/tables/applications.ts';
import { defineStream } from './stream-definition.ts';

export const teamAssignments = defineStream({
  name: 'team_assignments',
  path: '/api/teamassignments/',
  description: 'Team assignments (spec 4.3.4; needs `Assign reviews`).',
  keyOf: byRefs('application', 'team', 'stage'),
  skipOn: { 403: 'needs the `Assign reviews` permission' },
  table: tables.teamAssignments,
  mapping: teamAssignmentsStream,
  fields: sourceFields.team_assignments,
});
