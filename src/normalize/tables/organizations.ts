import type { TableDef } from '../table-def.ts';
import { col, enumCol, id, ref, req, tsCol } from './columns.ts';

export const organizations: TableDef = {
  name: 'organizations',
  kind: 'entity',
  description:
    'Organizations (GET /api/organizations/; callers without full rights get only id and name), plus OrgRef references (ref-only rows).',
  primaryKey: ['id'],
  columns: [
    id('Organization id.'),
    col('name', 'text', 'Organization name.'),
    enumCol('status', 'organization_status', 'Status (enum organization_status: 0 Inactive, 1 Active, 2 Invited).'),
    ref('primary_admin_id', 'users', 'Primary administrator (user).'),
    col('allow_collaborators', 'boolean', 'Organization applications can have collaborators.'),
    col('email', 'text', 'Email address.'),
    col('phone', 'text', 'Phone number.'),
    col('website', 'text', 'Website.'),
    col('address', 'text', 'Street address.'),
    col('city', 'text', 'City.'),
    col('country', 'text', 'Country.'),
    enumCol('tax_country', 'tax_country', 'Tax registration country/kind (enum tax_country).'),
    col('tax_number', 'text', 'Tax number (US 12-3456789, Canada 123456789 RT 0001, or VAT).'),
    col('logo_url', 'text', 'Logo URL.'),
  ],
};

export const organizationMembers: TableDef = {
  name: 'organization_members',
  kind: 'entity',
  description: 'Members of organizations (GET /api/organizations/{id}/members/); names and email are in users.',
  primaryKey: ['organization_id', 'user_id'],
  columns: [
    ref('organization_id', 'organizations', 'Organization.', true),
    ref('user_id', 'users', 'Member (user).', true),
    col('is_admin', 'boolean', 'Member is an organization administrator.'),
    enumCol('status', 'member_status', 'Membership status (enum member_status: 0 Inactive, 1 Active).'),
  ],
};

export const eligibility: TableDef = {
  name: 'eligibility',
  kind: 'entity',
  description:
    'Eligibility of each organization (GET /api/organizations/{id}/eligibility/, one object per organization).',
  primaryKey: ['organization_id'],
  columns: [
    ref('organization_id', 'organizations', 'Organization.', true),
    col('is_completed', 'boolean', 'Eligibility questionnaire completed.'),
    tsCol('created_at', 'When eligibility started'),
    tsCol('updated_at', 'When eligibility was last updated'),
  ],
};

export const eligibilityResponses: TableDef = {
  name: 'eligibility_responses',
  kind: 'bridge',
  description:
    'Responses of eligibility questionnaires. Question ids may repeat across tasks, so the key adds the occurrence number of the id within the object.',
  primaryKey: ['organization_id', 'question_id', 'occurrence'],
  columns: [
    ref('organization_id', 'organizations', 'Organization.', true),
    req('question_id', 'text', 'Question identifier (unique within a task, may repeat across tasks).'),
    req('occurrence', 'integer', '0 for the first response with this question id in the object, 1 for the second, ...'),
    col('position', 'integer', 'Index of the response in the responses array.'),
    col('name', 'text', 'Question text.'),
    col('response', 'text', 'Response text.'),
  ],
};
