import { byId, type StreamDef } from '../stream-def.ts';

export const organizations: StreamDef = {
  name: 'organizations',
  path: '/api/organizations/',
  description: 'Organizations (spec 4.9.1); parent of members, teams and eligibility.',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'needs `View users`' },
};
