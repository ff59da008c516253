import { byId, type StreamDef } from '../stream-def.ts';

export const financialTransactions: StreamDef = {
  name: 'financial_transactions',
  path: '/api/financial-transactions/',
  description: 'Financial transactions (spec 4.5.1; Financial Management only).',
  keyOf: byId,
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'Financial Management is not enabled or not permitted', 404: 'Financial Management is not enabled' },
};
