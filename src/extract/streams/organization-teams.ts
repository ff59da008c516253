import { byId, contentMarker, type StreamDef } from '../stream-def.ts';

export const organizationTeams: StreamDef = {
  name: 'organization_teams',
  path: '/api/organizations/{parent}/teams/',
  description: 'Teams of each organization (spec 4.9.11).',
  keyOf: byId,
  parent: { stream: 'organizations', marker: contentMarker },
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'needs an organization administrator or `Assume role`' },
};
