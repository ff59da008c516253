import type { TableDef } from '../table-def.ts';
import { col, enumCol, id, money, ref, req, tsCol } from './columns.ts';

export const programs: TableDef = {
  name: 'programs',
  kind: 'entity',
  description: 'Programs (funding opportunities), from GET /api/programs/ plus ProgramRef references (ref-only rows).',
  primaryKey: ['id'],
  columns: [
    id('Program id.'),
    col('name', 'text', 'Program name.'),
    col('identifier', 'text', 'Program identifier.'),
    col('summary', 'text', 'Short summary.'),
    col('description', 'text', 'Description.'),
    col('categories', 'text', 'Categories.'),
    col('active', 'boolean', 'Whether the program is active.'),
    col('launched', 'boolean', 'Whether the program is launched.'),
    col('access', 'boolean', 'Access flag of the program.'),
    col('publicity', 'boolean', 'Publicity flag.'),
    tsCol('open_datetime', 'When the program opens'),
    tsCol('close_datetime', 'When the program closes'),
    col('no_application_dates', 'boolean', 'The program has no application dates.'),
    col('no_close_date', 'boolean', 'The program has no close date.'),
    col('grace_period', 'integer', 'Grace period.'),
    enumCol(
      'applicant_type',
      'applicant_type',
      'Who may apply (enum applicant_type: 0 Individuals, 1 Organizations, 2 Both).',
    ),
    col('application_prefix', 'text', 'Prefix of application reference ids.'),
    col('application_title_help', 'text', 'Help text for the application title.'),
    col('require_application_title', 'boolean', 'Applications must have a title.'),
    col('randomize_application_id', 'boolean', 'Application ids are randomised.'),
    col('allow_collaborators', 'boolean', 'Applications can have collaborators.'),
    col('collaborator_domains', 'json', 'Allowed collaborator email domains (JSON array).'),
    col('limit_collaborator_domains', 'boolean', 'Collaborators are limited to collaborator_domains.'),
    col('collaborator_invite_instructions', 'text', 'Instructions shown when inviting collaborators.'),
    col('edit_after_submit', 'boolean', 'Applicants can edit after submitting.'),
    col('enable_application_limit', 'boolean', 'Application limit enabled (administrators only).'),
    col('max_applications', 'integer', 'Maximum number of applications.'),
    col('include_deadline_in_reminders', 'boolean', 'Reminders include the deadline.'),
    col('listing_url', 'text', 'Public listing URL.'),
    enumCol('score_format', 'score_format', 'Score format (enum score_format: 0 Percentage, 1 Actual, 2 Both).'),
    enumCol(
      'value_type',
      'value_type',
      'How the value is given (enum value_type: 0 Exactly, 2 Range, 3 None, 4 Custom).',
    ),
    money('value', 'Award value (or lower bound of a range)'),
    money('max_value', 'Upper bound of the award value range'),
    col('custom_value', 'text', 'Free-text value used when value_type is 4 Custom.'),
    col('hide_value_from_applicants', 'boolean', 'Value hidden from applicants (administrators only).'),
    col('number_of_awards', 'integer', 'Planned number of awards.'),
    col('awards_made', 'integer', 'Applications in the program that have been awarded.'),
    money('total', 'Total moved into the program budget'),
    money('allocated', 'Allocated to applications'),
    money('paid', 'Paid to applications'),
    money('balance', 'Current budget balance'),
  ],
};

export const programFundingSources: TableDef = {
  name: 'program_funding_sources',
  kind: 'bridge',
  description: 'Funds that fund each program (programs[].funding_sources); budget_id is the program balance id.',
  primaryKey: ['program_id', 'budget_id'],
  columns: [
    ref('program_id', 'programs', 'Program.', true),
    ref('budget_id', 'budgets', 'Program balance id (the program fund budget).', true),
    ref('fund_id', 'funds', 'Fund.'),
    money('balance', 'Balance of this funding source in the program'),
  ],
};

export const customFields: TableDef = {
  name: 'custom_fields',
  kind: 'entity',
  description: 'Custom field definitions (GET /api/customfields/), plus fields known only from values (ref-only rows).',
  primaryKey: ['id'],
  columns: [
    id('Custom field id.'),
    col('name', 'text', 'Display name.'),
    enumCol('type', 'custom_field_type', 'Field type (enum custom_field_type).'),
    enumCol('target', 'custom_field_target', 'What the field is attached to (enum custom_field_target).', 'text'),
    col('choices', 'json', 'Options of dropdown fields (JSON array).'),
    col('default_value', 'text', 'Default value (API field `default`).'),
    col('admin_only', 'boolean', 'Visible only to administrators.'),
    col('readonly', 'boolean', 'Value cannot be changed.'),
    col('required', 'boolean', 'Value must be filled in.'),
    col('show_in_registration', 'boolean', 'Displayed during registration.'),
  ],
};

export const customFieldValues: TableDef = {
  name: 'custom_field_values',
  kind: 'bridge',
  description:
    'Custom field values of applications, programs, funds, payments, awards and organizations (their custom_fields arrays).',
  primaryKey: ['entity_type', 'entity_id', 'field_id'],
  columns: [
    {
      ...req(
        'entity_type',
        'text',
        'Kind of record carrying the value (enum custom_field_entity: application, program, fund, payment, award, organization).',
      ),
      enum: 'custom_field_entity',
    },
    req('entity_id', 'bigint', 'Id of that record (in the table named by entity_type).'),
    ref('field_id', 'custom_fields', 'Custom field.', true),
    col('name', 'text', 'Field name as sent with the value.'),
    col('value', 'text', 'Value as sent (text; non-string values as JSON text).'),
  ],
};
