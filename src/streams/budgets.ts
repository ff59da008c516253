import { sourceFields } from '../normalize/source-fields.ts';
import { budgetsStream } from '../normalize/streams/finance.ts';
import * as tables from '../normalize/tables/finance.ts';
import { defineStream } from './stream-definition.ts';

export const budgets = defineStream({
  name: 'budgets',
  path: '/api/budgets/',
  description: 'Program fund budgets (spec 4.5.5).',
  skipOn: { 403: 'Financial Management is not enabled or not permitted', 404: 'Financial Management is not enabled' },
  table: tables.budgets,
  mapping: budgetsStream,
  fields: sourceFields.budgets,
});
