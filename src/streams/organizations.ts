import { sourceFields } from '../normalize/source-fields.ts';
import { organizationsStream } from '../normalize/streams/organizations.ts';
import * as tables from '../normalize/tables/organizations.ts';
import { defineStream } from './stream-definition.ts';

export const organizations = defineStream({
  name: 'organizations',
  path: '/api/organizations/',
  description: 'Organizations (spec 4.9.1); parent of members, teams and eligibility.',
  skipOn: { 403: 'needs `View users`' },
  table: tables.organizations,
  mapping: organizationsStream,
  fields: sourceFields.organizations,
});
