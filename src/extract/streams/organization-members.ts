import { byId, contentMarker, type StreamDef } from '../stream-def.ts';

export const organizationMembers: StreamDef = {
  name: 'organization_members',
  path: '/api/organizations/{parent}/members/',
  description: 'Members of each organization (spec 4.9.6).',
  keyOf: byId,
  parent: { stream: 'organizations', marker: contentMarker },
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'needs an organization administrator or `Assume role`' },
};
