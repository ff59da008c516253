import { byRefs } from './stream-def.ts';
import { I, TS } from '../normalize/field-kinds.ts';
import { ref } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const teamAssignments = defineStream({
  name: 'team_assignments',
  path: '/api/teamassignments/',
  description: 'Team assignments (spec 4.3.4; needs `Assign reviews`).',
  keyOf: byRefs('application', 'team', 'stage'),
  skipOn: { 403: 'needs the `Assign reviews` permission' },
  table: {
    name: 'team_assignments',
    kind: 'entity',
    description: 'Review assignments of teams to applications per stage (GET /api/teamassignments/).',
    primaryKey: ['application_id', 'team_id', 'stage_id'],
    columns: [
      ref('application_id', 'applications', 'Application to review.', { notNull: true, required: true }),
      ref('team_id', 'teams', 'Assigned team.', { notNull: true, required: true }),
      ref('stage_id', 'stages', 'Stage of the review.', { notNull: true, required: true }),
      ref('program_id', 'programs', 'Program of the application.'),
    ],
  },
  // Sent but not mapped (the key is the references): known, so not drift. updated_at is not in the spec's list.
  reads: { id: I, updated_at: TS },
});
