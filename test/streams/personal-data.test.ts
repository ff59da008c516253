import { describe, expect, it } from 'vitest';

import { metadataColumns } from '../../src/normalize/table-def.ts';
import { tables } from '../../src/streams/registry.ts';
import { loadModels } from '../../src/models/model-files.ts';

/**
 * Text and JSON columns of the core tables that hold no personal data: written by administrators (program texts,
 * report settings), the site's own vocabulary (names of statuses, stages, tasks, labels, funds, organizations) or
 * numbers as text. A new text column must be classified, or listed here, on purpose.
 */
const notPersonal = new Set([
  ...[
    'name',
    'identifier',
    'summary',
    'description',
    'categories',
    'application_prefix',
    'application_title_help',
    'collaborator_domains',
    'collaborator_invite_instructions',
    'listing_url',
    'custom_value',
  ].map((c) => `programs.${c}`),
  'applications.reference_id',
  'applications.current_status',
  'applications.awarded_as_sent',
  'application_labels.label',
  'application_tasks.name',
  'task_responses.question_id',
  'task_responses.question_label',
  'task_responses.option_ids',
  'application_notes.author_role',
  'custom_fields.name',
  'custom_fields.target',
  'custom_fields.choices',
  'custom_fields.default_value',
  'funds.name',
  'funds.fund_folder_name',
  'awards.awarded_as_sent',
  'payments.awarded_as_sent',
  ...['name', 'website', 'city', 'country', 'logo_url'].map((c) => `organizations.${c}`),
  'teams.name',
  'eligibility_responses.question_id',
  'eligibility_responses.name',
  ...['name', 'columns', 'filter', 'download_link', 'report_filename', 'job_id', 'last_error_message'].map(
    (c) => `reports.${c}`,
  ),
  'report_columns.header',
  'report_columns.row_key',
  'report_columns.variable',
  'activity.actor_role',
  'activity.type',
  'api_log.role',
  'api_log.method',
  'api_log.url',
  'stages.title',
  'statuses.name',
  'payment_statuses.name',
  'tasks.name',
  'custom_field_values.entity_type',
  'custom_field_values.name',
  'enum_labels.enum',
  'enum_labels.value',
  'enum_labels.label',
]);

describe('personal data classification', () => {
  const core = tables.filter((t) => t.kind !== 'bookkeeping');

  it('classifies every text and JSON column of the core tables, or lists it as holding none', () => {
    const unclassified = core.flatMap((t) =>
      t.columns
        .filter((c) => (c.type === 'text' || c.type === 'json') && c.personal === undefined)
        .map((c) => `${t.name}.${c.name}`)
        .filter((name) => !notPersonal.has(name)),
    );
    expect(unclassified).toEqual([]);
    const listedButClassified = core.flatMap((t) =>
      t.columns.filter((c) => c.personal !== undefined && notPersonal.has(`${t.name}.${c.name}`)),
    );
    expect(listedButClassified).toEqual([]);
  });

  it('makes every user id an identifier, and names, emails, phones, addresses and tax numbers too', () => {
    for (const t of core) {
      for (const c of t.columns) {
        const isUserId = c.references?.table === 'users' || (t.name === 'users' && c.name === 'id');
        const namesPerson = /^(first_name|last_name|email|phone|address|tax_number)$/.test(c.name);
        if (isUserId || namesPerson)
          expect(`${t.name}.${c.name}: ${c.personal}`).toBe(`${t.name}.${c.name}: identifier`);
      }
    }
  });

  it('keeps answers and notes as free text, and _raw as both', () => {
    const kind = (table: string, column: string): string | undefined =>
      tables.find((t) => t.name === table)?.columns.find((c) => c.name === column)?.personal;
    expect(kind('application_tasks', 'data')).toBe('free_text');
    expect(kind('task_responses', 'text_value')).toBe('free_text');
    expect(kind('application_notes', 'content')).toBe('free_text');
    expect(metadataColumns.find((c) => c.name === '_raw')?.personal).toBe('identifier_and_free_text');
  });

  it('reads a model column kind from its header, and marks the reviewer columns of reviewer_load', () => {
    const load = loadModels().find((m) => m.name === 'reviewer_load');
    const personal = Object.fromEntries((load?.columns ?? []).map((c) => [c.name, c.personal ?? null]));
    expect(personal).toMatchObject({
      reviewer_id: 'identifier',
      reviewer_name: 'identifier',
      reviewer_email: 'identifier',
      stage_title: null,
      assigned: null,
    });
  });
});
