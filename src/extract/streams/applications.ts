import { byId, type StreamDef } from '../stream-def.ts';

export const applications: StreamDef = {
  name: 'applications',
  path: '/api/applications/',
  description: 'Applications (spec 4.2.1); parent of stages, tasks and notes.',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
};
