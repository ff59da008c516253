import { col, enumCol, id, identifier, ref } from './columns.ts';
import { defineStream } from './stream-definition.ts';

/** Tables filled per organization by its child streams: a deleted organization takes their rows with it. */
const orgChildren = ['organization_members', 'teams', 'eligibility', 'eligibility_responses'] as const;

/** A caller without full rights receives OrgRef (id, name) instead: the other columns are then NULL. */
export const organizations = defineStream({
  name: 'organizations',
  path: '/api/organizations/',
  description: 'Organizations (spec 4.9.1); parent of members, teams and eligibility.',
  skipOn: { 403: 'needs `View users`' },
  customFields: 'organization',
  cascades: orgChildren.map((table) => ({
    table,
    column: 'organization_id',
    parentTable: 'organizations',
    parentColumn: 'id',
  })),
  table: {
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
      col('email', 'text', 'Email address.', identifier),
      col('phone', 'text', 'Phone number.', identifier),
      col('website', 'text', 'Website.'),
      col('address', 'text', 'Street address.', identifier),
      col('city', 'text', 'City.'),
      col('country', 'text', 'Country.'),
      enumCol('tax_country', 'tax_country', 'Tax registration country/kind (enum tax_country).'),
      col('tax_number', 'text', 'Tax number (US 12-3456789, Canada 123456789 RT 0001, or VAT).', identifier),
      col('logo_url', 'text', 'Logo URL.'),
    ],
  },
});
