import { byId, type StreamDef } from '../stream-def.ts';

export const awards: StreamDef = {
  name: 'awards',
  path: '/api/awards/',
  description: 'Application awards visible to the caller (spec 4.6.1).',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'needs `View Applications`' },
};
