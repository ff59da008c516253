import type { TableDef } from '../normalize/table-def.ts';
import { col, enumCol, freeText, id, identifier, ref, req } from './columns.ts';

export const users: TableDef = {
  name: 'users',
  kind: 'dimension',
  description:
    'Every user seen in any reference (applicants, collaborators, reviewers, note authors, actors, creators, updaters, organization members); there is no users endpoint. Values come from references: where they disagree the later run wins (a rename shows on the next run that reads a record naming the user); within a run the richest (longest source JSON) wins, others filling its gaps.',
  primaryKey: ['id'],
  columns: [
    id('User id.', identifier),
    col('first_name', 'text', 'First name, as the newest reference gives it.', identifier),
    col('last_name', 'text', 'Last name, as the newest reference gives it.', identifier),
    col('email', 'text', 'Email address, as the newest reference gives it.', identifier),
  ],
};

export const stages: TableDef = {
  name: 'stages',
  kind: 'dimension',
  description: 'Stages of programs, built from StageRef references (no stages endpoint).',
  primaryKey: ['id'],
  columns: [id('Stage id.'), col('title', 'text', 'Stage title.')],
};

export const statuses: TableDef = {
  name: 'statuses',
  kind: 'dimension',
  description: 'Application statuses (the status of a stage record), built from StatusRef references.',
  primaryKey: ['id'],
  columns: [id('Status id.'), col('name', 'text', 'Status name.')],
};

/** Payment statuses number from 1 like application statuses but are other things: a table of their own. */
export const paymentStatuses: TableDef = {
  name: 'payment_statuses',
  kind: 'dimension',
  description:
    'Payment statuses, built from the StatusRef of payments and award payments (ids are not application status ids).',
  primaryKey: ['id'],
  columns: [id('Payment status id.'), col('name', 'text', 'Payment status name.')],
};

export const tasks: TableDef = {
  name: 'tasks',
  kind: 'dimension',
  description: 'Task definitions, built from TaskRef references and application task records (no tasks endpoint).',
  primaryKey: ['id'],
  columns: [
    id('Task id.'),
    col('name', 'text', 'Task name.'),
    enumCol('type', 'task_type', 'Kind of task (enum task_type), when seen in an application task record.'),
    ref('stage_id', 'stages', 'Stage the task belongs to, when seen in an application task record.'),
  ],
};

export const enumLabels: TableDef = {
  name: 'enum_labels',
  kind: 'dimension',
  description:
    'Labels of every enumeration of the API. Join a numeric enum column on (enum, code), e.g. ' +
    "`JOIN enum_labels l ON l.enum = 'award_decision' AND l.code = awards.decision`, a text one on (enum, value).",
  primaryKey: ['enum', 'value'],
  columns: [
    req('enum', 'text', 'Enumeration name, as named by the enum columns (e.g. application_state).'),
    req('value', 'text', 'Value as text (e.g. "0", "admin").'),
    req('label', 'text', 'Human-readable label from the API documentation.'),
    col(
      'code',
      'bigint',
      'The value as a number, for a numeric enum (NULL for a text one such as user_role): joins the integer enum columns without a cast.',
    ),
  ],
};

export const quarantine: TableDef = {
  name: '_grantflow_quarantine',
  kind: 'bookkeeping',
  description: 'Records that could not be typed, kept with the reason so nothing is dropped silently.',
  primaryKey: ['stream', 'record_key'],
  columns: [
    req('stream', 'text', 'Stream the record came from.'),
    req('record_key', 'text', 'Stable key of the record: sha256 (hex) of its canonical JSON (sorted keys).'),
    req('reason', 'text', 'Why the record could not be typed.'),
    req('payload', 'json', 'The record exactly as parsed.', { personal: 'identifier_and_free_text' }),
    req('run_id', 'text', 'Run that quarantined it (last time).'),
    req('quarantined_at', 'timestamptz', 'When it was quarantined (UTC).'),
  ],
};

/** Every entity stream with `customFields` writes its record's `custom_fields` entries here (derive-mapping.ts). */
export const customFieldValues: TableDef = {
  name: 'custom_field_values',
  kind: 'bridge',
  description:
    'Custom field values of applications, programs, funds, payments, awards and organizations (their custom_fields arrays).',
  primaryKey: ['entity_type', 'entity_id', 'field_id'],
  columns: [
    enumCol(
      'entity_type',
      'custom_field_entity',
      'Kind of record carrying the value (enum custom_field_entity: application, program, fund, payment, award, organization).',
      'text',
      { notNull: true },
    ),
    req('entity_id', 'bigint', 'Id of that record (in the table named by entity_type).'),
    ref('field_id', 'custom_fields', 'Custom field.', { notNull: true }),
    col('name', 'text', 'Field name as sent with the value.'),
    col('value', 'text', 'Value as sent (text; non-string values as JSON text).', freeText),
  ],
};

/**
 * Tables no one stream owns: dimensions built from references wherever they appear, the custom field values every
 * entity stream writes, and the labels and quarantine grantflow itself fills.
 */
export const sharedTables: readonly TableDef[] = [
  users,
  stages,
  statuses,
  paymentStatuses,
  tasks,
  customFieldValues,
  enumLabels,
  quarantine,
];
