import { col, id, money, ref, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const funds = defineStream({
  name: 'funds',
  path: '/api/funds/',
  description: 'Funds (spec 4.5.3; Financial Management, `View/Edit Funds`).',
  skipOn: { 403: 'Financial Management is not enabled or not permitted', 404: 'Financial Management is not enabled' },
  customFields: 'fund',
  table: {
    name: 'funds',
    kind: 'entity',
    description: 'Funds (GET /api/funds/), plus FundRef references (ref-only rows).',
    primaryKey: ['id'],
    columns: [
      id('Fund id.'),
      col('name', 'text', 'Fund name.'),
      col('site_fund_id', 'bigint', 'Incremental unique fund number of the site.'),
      ref('created_by_id', 'users', 'User who created the fund.'),
      tsCol('created_at', 'When the fund was created', { read: 'strictTs' }),
      col('fund_folder_id', 'bigint', 'Folder id of the fund.', { source: 'fund_folder.id' }),
      col('fund_folder_name', 'text', 'Folder name of the fund.', { source: 'fund_folder.name' }),
      money('balance', 'Current balance'),
      money('total', 'Total moved into the fund'),
      money('allocated', 'Allocated to applications'),
      money('paid', 'Paid to applications'),
      money('available_to_programs', 'Transferred to programs'),
      col(
        'utilization_rate',
        'double',
        'Allocated to applications / total moved into the fund, a fraction from 0 to 1 (1 = all of it): the site sends utilization in percent, divided here by 100.',
        { source: 'utilization', read: 'percent' },
      ),
    ],
  },
});
