import { byId, type StreamDef } from '../stream-def.ts';

export const programs: StreamDef = {
  name: 'programs',
  path: '/api/programs/',
  description: 'Programs visible to the caller (spec 4.11.1).',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
};
