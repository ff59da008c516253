import { sourceFields } from '../normalize/source-fields.ts';
import { paymentsStream } from '../normalize/streams/finance.ts';
import * as tables from '../normalize/tables/finance.ts';
import { defineStream } from './stream-definition.ts';

export const payments = defineStream({
  name: 'payments',
  path: '/api/payments/',
  description: 'Payments (spec 4.6.3; administrators with `Award Applications`).',
  skipOn: { 403: 'needs the `Award Applications` permission' },
  table: tables.payments,
  otherTables: [tables.paymentSources],
  mapping: paymentsStream,
  fields: sourceFields.payments,
});
