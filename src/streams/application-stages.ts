import { applicationParent, byRefs } from './stream-def.ts';
import { I } from '../normalize/field-kinds.ts';
import { col, enumCol, ref, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const applicationStages = defineStream({
  name: 'application_stages',
  path: '/api/applications/{parent}/stages/',
  description: 'Stage records of each application (spec 4.2.6; site administrators only).',
  keyOf: byRefs('stage'),
  parent: applicationParent,
  skipOn: { 403: 'stage records need a site administrator' },
  table: {
    name: 'application_stages',
    kind: 'entity',
    description: 'Stage records of each application (GET /api/applications/{id}/stages/).',
    primaryKey: ['application_id', 'stage_id'],
    columns: [
      ref('application_id', 'applications', 'Application.', { notNull: true, read: 'parent' }),
      ref('stage_id', 'stages', 'Stage.', { notNull: true, required: true }),
      enumCol(
        'state',
        'stage_record_state',
        'State in this stage (enum stage_record_state: 0 Submitted, 1 Reopened, 2 Initialized).',
      ),
      ref('status_id', 'statuses', 'Status in this stage.'),
      tsCol('created_at', 'When the application entered the stage', { read: 'strictTs' }),
      tsCol('date_submitted', 'When it was submitted in this stage'),
      tsCol('date_reopened', 'When it was reopened in this stage'),
      col(
        'task_completion_rate',
        'double',
        'Required tasks completed, a fraction from 0 to 1: the site sends task_completion in percent, divided here by 100.',
        { source: 'task_completion', read: 'percent' },
      ),
      col('reviews_assigned', 'integer', 'Reviews assigned in this stage.'),
      col('reviews_submitted', 'integer', 'Reviews submitted in this stage.'),
      col('reviews_completed', 'integer', 'Reviews completed in this stage.'),
    ],
  },
  // The stage record's own id: sent, not stored (the record is keyed by its stage).
  reads: { id: I },
});
