import { byId, type StreamDef } from '../stream-def.ts';

export const reports: StreamDef = {
  name: 'reports',
  path: '/api/reports/',
  description: 'Report definitions and their generation status (spec 4.12.1; needs `Reports`).',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'needs the `Reports` permission' },
};
