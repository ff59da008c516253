import { sourceFields } from '../normalize/source-fields.ts';
import { awardsStream } from '../normalize/streams/finance.ts';
import * as tables from '../normalize/tables/finance.ts';
import { defineStream } from './stream-definition.ts';

export const awards = defineStream({
  name: 'awards',
  path: '/api/awards/',
  description: 'Application awards visible to the caller (spec 4.6.1).',
  skipOn: { 403: 'needs `View Applications`' },
  table: tables.awards,
  otherTables: [tables.awardPayments],
  mapping: awardsStream,
  fields: sourceFields.awards,
});
