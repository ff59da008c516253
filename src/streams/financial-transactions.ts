import { sourceFields } from '../normalize/source-fields.ts';
import { financialTransactionsStream } from '../normalize/streams/finance.ts';
import * as tables from '../normalize/tables/finance.ts';
import { defineStream } from './stream-definition.ts';

export const financialTransactions = defineStream({
  name: 'financial_transactions',
  path: '/api/financial-transactions/',
  description: 'Financial transactions (spec 4.5.1; Financial Management only).',
  skipOn: { 403: 'Financial Management is not enabled or not permitted', 404: 'Financial Management is not enabled' },
  table: tables.financialTransactions,
  mapping: financialTransactionsStream,
  fields: sourceFields.financial_transactions,
});
