import { contentMarker, type StreamDef } from '../stream-def.ts';

export const eligibility: StreamDef = {
  name: 'eligibility',
  path: '/api/organizations/{parent}/eligibility/',
  description: 'Eligibility of each organization (spec 4.10.1); 404 when not enabled or not started.',
  keyOf: () => 'eligibility',
  parent: { stream: 'organizations', marker: contentMarker },
  shape: 'object',
  mode: 'scan',
  skipOn: { 403: 'needs an organization administrator or `Assume role`' },
  notFoundMeansEmpty: true,
};
