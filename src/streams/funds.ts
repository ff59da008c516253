import { sourceFields } from '../normalize/source-fields.ts';
import { fundsStream } from '../normalize/streams/finance.ts';
import * as tables from '../normalize/tables/finance.ts';
import { defineStream } from './stream-definition.ts';

export const funds = defineStream({
  name: 'funds',
  path: '/api/funds/',
  description: 'Funds (spec 4.5.3; Financial Management, `View/Edit Funds`).',
  skipOn: { 403: 'Financial Management is not enabled or not permitted', 404: 'Financial Management is not enabled' },
  table: tables.funds,
  mapping: fundsStream,
  fields: sourceFields.funds,
});
