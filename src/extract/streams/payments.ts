import { byId, type StreamDef } from '../stream-def.ts';

export const payments: StreamDef = {
  name: 'payments',
  path: '/api/payments/',
  description: 'Payments (spec 4.6.3; administrators with `Award Applications`).',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'needs the `Award Applications` permission' },
};
