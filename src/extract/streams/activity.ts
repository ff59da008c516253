import { byId, type StreamDef } from '../stream-def.ts';

export const activity: StreamDef = {
  name: 'activity',
  path: '/api/activity/',
  description: 'Activity items visible to the caller (spec 4.1), newest first.',
  keyOf: byId,
  shape: 'list',
  mode: 'append_newest_first',
};
