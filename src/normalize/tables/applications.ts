import type { TableDef } from '../table-def.ts';
import { ref } from './columns.ts';

export const assignments: TableDef = {
  name: 'assignments',
  kind: 'entity',
  description: 'Review assignments of reviewers to applications per stage (GET /api/assignments/).',
  primaryKey: ['application_id', 'reviewer_id', 'stage_id'],
  columns: [
    ref('application_id', 'applications', 'Application to review.', true),
    ref('reviewer_id', 'users', 'Assigned reviewer.', true),
    ref('stage_id', 'stages', 'Stage of the review.', true),
    ref('program_id', 'programs', 'Program of the application.'),
  ],
};

export const teamAssignments: TableDef = {
  name: 'team_assignments',
  kind: 'entity',
  description: 'Review assignments of teams to applications per stage (GET /api/teamassignments/).',
  primaryKey: ['application_id', 'team_id', 'stage_id'],
  columns: [
    ref('application_id', 'applications', 'Application to review.', true),
    ref('team_id', 'teams', 'Assigned team.', true),
    ref('stage_id', 'stages', 'Stage of the review.', true),
    ref('program_id', 'programs', 'Program of the application.'),
  ],
};
