import type { TableDef } from '../table-def.ts';
import { col, enumCol, id, money, ref, req, tsCol } from './columns.ts';

export const applications: TableDef = {
  name: 'applications',
  kind: 'entity',
  description: 'Applications to programs (GET /api/applications/).',
  primaryKey: ['id'],
  columns: [
    id('Application system id.'),
    col('title', 'text', 'Application title.'),
    col('reference_id', 'text', 'Human-facing application id (site prefix + number).'),
    enumCol('state', 'application_state', 'Application state (enum application_state: 0 Active ... 4 Trashed).'),
    ref('applicant_id', 'users', 'Applicant (user).'),
    ref('program_id', 'programs', 'Program applied to.'),
    ref('current_stage_id', 'stages', 'Stage the application is currently in.'),
    ref('organization_id', 'organizations', 'Applying organization; NULL when the application has none.'),
    ref(
      'current_status_id',
      'statuses',
      'Current status (the `status` the service sends, not in spec 2.3); NULL when absent or sent as a name only.',
    ),
    col('current_status', 'text', 'Name of the current status as sent (StatusRef name or a bare name).'),
    ref('decision_award_id', 'awards', 'Award holding the administrator decision (DecisionRef id).'),
    enumCol('decision', 'award_decision', 'Administrator decision (enum award_decision: 0 Awarded, 1 Declined).'),
    col('awarded', 'text', 'Awarded value exactly as the API sends it (a string).'),
    money('awarded_amount', 'Awarded value parsed as money; NULL when the text is not an unambiguous amount'),
    col('average_score', 'double', 'Average review score.'),
    col('overall_score', 'double', 'Overall review score.'),
    col('weighted_score', 'double', 'Weighted review score.'),
    tsCol('created_at', 'When the application was created'),
    tsCol('updated_at', 'When the application was last updated'),
    tsCol('last_submitted_at', 'Most recent submission'),
  ],
};

export const applicationCollaborators: TableDef = {
  name: 'application_collaborators',
  kind: 'bridge',
  description: 'Collaborators of each application (applications[].collaborators).',
  primaryKey: ['application_id', 'user_id'],
  columns: [
    ref('application_id', 'applications', 'Application.', true),
    ref('user_id', 'users', 'Collaborating user.', true),
  ],
};

export const applicationLabels: TableDef = {
  name: 'application_labels',
  kind: 'bridge',
  description:
    'Current labels of each application (applications[].labels, which the service sends and spec 2.3 omits).',
  primaryKey: ['application_id', 'label'],
  columns: [
    ref('application_id', 'applications', 'Application.', true),
    req('label', 'text', 'Label name as sent.'),
    col('label_id', 'bigint', 'Label id, when the label came as an object with an id.'),
  ],
};

export const applicationStages: TableDef = {
  name: 'application_stages',
  kind: 'entity',
  description: 'Stage records of each application (GET /api/applications/{id}/stages/).',
  primaryKey: ['application_id', 'stage_id'],
  columns: [
    ref('application_id', 'applications', 'Application.', true),
    ref('stage_id', 'stages', 'Stage.', true),
    enumCol(
      'state',
      'stage_record_state',
      'State in this stage (enum stage_record_state: 0 Submitted, 1 Reopened, 2 Initialized).',
    ),
    ref('status_id', 'statuses', 'Status in this stage.'),
    tsCol('created_at', 'When the application entered the stage'),
    tsCol('date_submitted', 'When it was submitted in this stage'),
    tsCol('date_reopened', 'When it was reopened in this stage'),
    col('task_completion', 'integer', 'Percentage of required tasks completed.'),
    col('reviews_assigned', 'integer', 'Reviews assigned in this stage.'),
    col('reviews_submitted', 'integer', 'Reviews submitted in this stage.'),
    col('reviews_completed', 'integer', 'Reviews completed in this stage.'),
  ],
};

export const applicationTasks: TableDef = {
  name: 'application_tasks',
  kind: 'entity',
  description: 'Tasks of each application (GET /api/applications/{id}/tasks/); responses are in task_responses.',
  primaryKey: ['application_id', 'task_id'],
  columns: [
    ref('application_id', 'applications', 'Application.', true),
    ref('task_id', 'tasks', 'Task.', true),
    col('name', 'text', 'Task name.'),
    enumCol('status', 'task_status', 'Task status (enum task_status: 1 Not started, 2 In progress, 3 Completed).'),
    enumCol('type', 'task_type', 'Task type (enum task_type).'),
    ref('stage_id', 'stages', 'Stage the task belongs to.'),
    tsCol('created_at', 'When the task was created'),
    tsCol('updated_at', 'When the task was last updated'),
    tsCol('completed_at', 'When the task was completed'),
    col('data', 'json', 'The task responses object as sent (question id -> response).'),
  ],
};

export const taskResponses: TableDef = {
  name: 'task_responses',
  kind: 'bridge',
  description:
    'One row per question answered in a task (application_tasks.data), bare or wrapped as {label, response}; typed columns are set only where the shape of the answer is unambiguous.',
  primaryKey: ['application_id', 'task_id', 'question_id'],
  columns: [
    ref('application_id', 'applications', 'Application.', true),
    ref('task_id', 'tasks', 'Task.', true),
    req('question_id', 'text', 'Question id (a string key of the task data).'),
    col(
      'question_label',
      'text',
      'Label of the question, when the answer came wrapped as {label, response} (the shape the service sends); NULL for a bare answer or a wrapped one without a label.',
    ),
    req(
      'response_json',
      'json',
      'The answer exactly as sent, whatever its shape: the bare value, or the response of a {label, response} entry (the whole entry is in _raw).',
    ),
    col(
      'text_value',
      'text',
      'The response when it is a JSON string, as sent: a text question, or a number question answered as text ("12", "1,250.50"). The API does not publish question types, so such text is not read as a number.',
    ),
    col(
      'number_value',
      'double',
      'The response when it is a JSON number (number question; an integer may also be a single-choice option id); NULL for a number sent as text, which stays in text_value.',
    ),
    col(
      'option_id',
      'bigint',
      'Chosen option id when the response is a single integer below 2^53, or {value: integer, other}.',
    ),
    col(
      'option_ids',
      'json',
      'Chosen option ids (JSON array text) when the response is an array of integers below 2^53, or {value: [..], other}.',
    ),
    col(
      'other_text',
      'text',
      "Text of the 'other' choice of {value, other} or {other} alone (JSON array text when it is an array).",
    ),
  ],
};

export const applicationNotes: TableDef = {
  name: 'application_notes',
  kind: 'entity',
  description:
    'Notes on applications (GET /api/applications/{id}/notes/). A note without an id gets a synthetic negative id (see id_synthetic).',
  primaryKey: ['id'],
  columns: [
    id('Note id; when the API sends none, a stable negative id derived from (application, author, created_at).'),
    req('id_synthetic', 'boolean', 'True when id was derived because the API sent no id.'),
    ref('application_id', 'applications', 'Application the note is on.', true),
    ref('author_id', 'users', 'Author of the note.'),
    enumCol('author_role', 'actor_role', 'Role of the author (admin, reviewer).', 'text'),
    col('content', 'text', 'Text of the note.'),
    col('edited', 'boolean', 'Whether the note was edited.'),
    col('is_private', 'boolean', 'True when only administrators can see the note.'),
    tsCol('created_at', 'When the note was written'),
    tsCol('updated_at', 'When the note was last updated'),
  ],
};
