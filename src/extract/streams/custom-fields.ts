import { byId, type StreamDef } from '../stream-def.ts';

export const customFields: StreamDef = {
  name: 'custom_fields',
  path: '/api/customfields/',
  description: 'Custom field definitions (spec 4.4.1; needs `Custom fields`).',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'needs the `Custom fields` permission' },
};
