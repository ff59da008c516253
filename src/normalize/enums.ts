import type { Row } from './table-def.ts';

/**
 * Every enumeration of the spec (section 2/3): enum name -> value (as text) -> label. Enum columns name their
 * enum in ColumnDef.enum; analysts join `enum_labels` on (enum, code) for a numeric enum, (enum, value) for a text one.
 */
const vat = (country: string): string => `${country} - VAT Number`;

export const enums = {
  application_state: { 0: 'Active', 1: 'Locked', 2: 'Hidden', 3: 'Archived', 4: 'Trashed' },
  stage_record_state: { 0: 'Submitted', 1: 'Reopened', 2: 'Initialized' },
  task_status: { 1: 'Not started', 2: 'In progress', 3: 'Completed' },
  task_type: {
    1: 'Fill out a form',
    2: 'Attach file',
    5: 'Complete an external task',
    7: 'Get a recommendation',
    10: 'Make a payment',
    20: 'Verify charity status',
  },
  custom_field_type: {
    0: 'Short text',
    1: 'Dropdown',
    2: 'Email address',
    4: 'Number',
    6: 'Website',
    7: 'Long text',
    8: 'Date',
  },
  custom_field_target: {
    application: 'Application',
    applicant: 'Applicant',
    reviewer: 'Reviewer',
    recommender: 'Recommender',
    program: 'Program',
    decision: 'Decision',
  },
  custom_field_entity: {
    application: 'Application',
    program: 'Program',
    fund: 'Fund',
    payment: 'Payment',
    award: 'Award',
    organization: 'Organization',
  },
  // The spec permits 4 but gives it no label.
  transaction_type: { 0: 'Deposit', 1: 'Withdrawal', 2: 'Transfer', 3: 'Payment', 4: 'Unknown (4)' },
  source_type: { 0: 'No source', 1: 'Program', 2: 'Fund', 3: 'Application' },
  destination_type: { 0: 'No destination', 1: 'Program', 2: 'Fund', 3: 'Application' },
  report_status: { 0: 'Created', 1: 'Queued', 2: 'Generating', 3: 'Generated', 4: 'Error', 5: 'Canceled' },
  report_source: { 0: 'Applications', 1: 'Reviews', 2: 'Recommendations', 3: 'Users' },
  award_decision: { 0: 'Awarded', 1: 'Declined' },
  applicant_decision: { 0: 'Pending', 2: 'Accepted', 3: 'Declined' },
  organization_status: { 0: 'Inactive', 1: 'Active', 2: 'Invited' },
  member_status: { 0: 'Inactive', 1: 'Active' },
  tax_country: {
    0: 'USA - EIN Number',
    1: 'Canada - CRA Business Number',
    2: vat('Austria'),
    3: vat('Belgium'),
    4: vat('Bulgaria'),
    5: vat('Croatia'),
    6: vat('Cyprus'),
    7: vat('Czech Republic'),
    8: vat('Denmark'),
    9: vat('Estonia'),
    10: vat('Finland'),
    11: vat('France'),
    12: vat('Germany'),
    13: vat('Greece'),
    14: vat('Hungary'),
    15: vat('Ireland'),
    16: vat('Italy'),
    17: vat('Latvia'),
    18: vat('Lithuania'),
    19: vat('Luxembourg'),
    20: vat('Malta'),
    21: vat('Netherlands'),
    22: vat('Poland'),
    23: vat('Portugal'),
    24: vat('Romania'),
    25: vat('Slovakia'),
    26: vat('Slovenia'),
    27: vat('Spain'),
    28: vat('Sweden'),
    29: vat('United Kingdom and Isle of Man'),
  },
  applicant_type: { 0: 'Individuals', 1: 'Organizations', 2: 'Both' },
  score_format: { 0: 'Percentage', 1: 'Actual', 2: 'Both' },
  value_type: { 0: 'Exactly', 2: 'Range', 3: 'None', 4: 'Custom' },
  actor_role: { admin: 'Administrator', reviewer: 'Reviewer' },
  user_role: { applicant: 'Applicant', recommender: 'Recommender', reviewer: 'Reviewer', admin: 'Administrator' },
  http_method: { GET: 'GET', POST: 'POST', PATCH: 'PATCH', DELETE: 'DELETE', PUT: 'PUT' },
  http_status: {
    200: 'OK',
    201: 'Created',
    204: 'No Content',
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    405: 'Method Not Allowed',
  },
} as const satisfies Record<string, Record<string | number, string>>;

export type EnumName = keyof typeof enums;
export const enumNames = Object.keys(enums) as EnumName[];

/** Rows of `enum_labels`: (enum, value, label), value as text. */
export function enumLabelRows(): Row[] {
  const rows: Row[] = [];
  for (const name of enumNames) {
    for (const [value, label] of Object.entries(enums[name])) {
      // `code`: numeric values as numbers, so integer enum columns join without a cast.
      const code = /^-?\d+$/.test(value) ? Number(value) : null;
      rows.push({ enum: name, value, label, code, _raw: JSON.stringify({ enum: name, value, label }) });
    }
  }
  return rows;
}
