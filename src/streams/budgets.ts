import { id, money, ref, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const budgets = defineStream({
  name: 'budgets',
  path: '/api/budgets/',
  description: 'Program fund budgets (spec 4.5.5).',
  skipOn: { 403: 'Financial Management is not enabled or not permitted', 404: 'Financial Management is not enabled' },
  table: {
    name: 'budgets',
    kind: 'entity',
    description: 'Program fund budgets: money of one fund in one program (GET /api/budgets/).',
    primaryKey: ['id'],
    columns: [
      id('Program balance id.'),
      ref('fund_id', 'funds', 'Fund.'),
      ref('program_id', 'programs', 'Program.'),
      money('budget', 'Total transferred to the program from this fund'),
      money('allocated', 'Allocated in the program from this fund'),
      money('paid', 'Paid to applications in the program from this fund'),
      money('balance', 'Current balance in the program from this fund'),
      tsCol('created_at', 'When the budget was created', { read: 'strictTs' }),
    ],
  },
});
