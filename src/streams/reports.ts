import { sourceFields } from '../normalize/source-fields.ts';
import { reportsStream } from '../normalize/streams/programs.ts';
import * as tables from '../normalize/tables/logs.ts';
import { defineStream } from './stream-definition.ts';

export const reports = defineStream({
  name: 'reports',
  path: '/api/reports/',
  description: 'Report definitions and their generation status (spec 4.12.1; needs `Reports`).',
  skipOn: { 403: 'needs the `Reports` permission' },
  table: tables.reports,
  mapping: reportsStream,
  fields: sourceFields.reports,
});
