import { byId, type StreamDef } from '../stream-def.ts';

export const funds: StreamDef = {
  name: 'funds',
  path: '/api/funds/',
  description: 'Funds (spec 4.5.3; Financial Management, `View/Edit Funds`).',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'Financial Management is not enabled or not permitted', 404: 'Financial Management is not enabled' },
};
