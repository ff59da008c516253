import { byId, type StreamDef } from '../stream-def.ts';

export const budgets: StreamDef = {
  name: 'budgets',
  path: '/api/budgets/',
  description: 'Program fund budgets (spec 4.5.5).',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'Financial Management is not enabled or not permitted', 404: 'Financial Management is not enabled' },
};
