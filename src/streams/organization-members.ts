import { contentMarker } from '../extract/stream-def.ts';
import { sourceFields } from '../normalize/source-fields.ts';
import { organizationMembersStream } from '../normalize/streams/organizations.ts';
import * as tables from '../normalize/tables/organizations.ts';
import { defineStream } from './stream-definition.ts';

export const organizationMembers = defineStream({
  name: 'organization_members',
  path: '/api/organizations/{parent}/members/',
  description: 'Members of each organization (spec 4.9.6).',
  parent: { stream: 'organizations', marker: contentMarker },
  skipOn: { 403: 'needs an organization administrator or `Assume role`' },
  table: tables.organizationMembers,
  mapping: organizationMembersStream,
  fields: sourceFields.organization_members,
});
