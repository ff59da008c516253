import { contentMarker } from '../extract/stream-def.ts';
import { sourceFields } from '../normalize/source-fields.ts';
import { organizationTeamsStream } from '../normalize/streams/organizations.ts';
import * as tables from '../normalize/tables/dimensions.ts';
import { defineStream } from './stream-definition.ts';

export const organizationTeams = defineStream({
  name: 'organization_teams',
  path: '/api/organizations/{parent}/teams/',
  description: 'Teams of each organization (spec 4.9.11).',
  parent: { stream: 'organizations', marker: contentMarker },
  skipOn: { 403: 'needs an organization administrator or `Assume role`' },
  table: tables.teams,
  mapping: organizationTeamsStream,
  fields: sourceFields.organization_teams,
});
