import { byId, type StreamDef } from '../stream-def.ts';

export const apiLog: StreamDef = {
  name: 'api_log',
  path: '/api/log/',
  description: 'Log of API calls (spec 4.7), newest first.',
  keyOf: byId,
  shape: 'list',
  mode: 'append_newest_first',
  skipOn: { 403: 'the API call log is not visible to this user' },
};
