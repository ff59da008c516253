import { byRefs } from './stream-def.ts';
import { I, TS } from '../normalize/field-kinds.ts';
import { ref } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const assignments = defineStream({
  name: 'assignments',
  path: '/api/assignments/',
  description: 'Reviewer assignments (spec 4.3.1; needs `Assign reviews`).',
  keyOf: byRefs('application', 'reviewer', 'stage'),
  skipOn: { 403: 'needs the `Assign reviews` permission' },
  table: {
    name: 'assignments',
    kind: 'entity',
    description: 'Review assignments of reviewers to applications per stage (GET /api/assignments/).',
    primaryKey: ['application_id', 'reviewer_id', 'stage_id'],
    columns: [
      ref('application_id', 'applications', 'Application to review.', { notNull: true, required: true }),
      ref('reviewer_id', 'users', 'Assigned reviewer.', { notNull: true, required: true }),
      ref('stage_id', 'stages', 'Stage of the review.', { notNull: true, required: true }),
      ref('program_id', 'programs', 'Program of the application.'),
    ],
  },
  // Sent but not mapped (the key is the references): known, so not drift. updated_at is not in the spec's list.
  reads: { id: I, updated_at: TS },
});
