import { sourceFields } from '../normalize/source-fields.ts';
import { programsStream } from '../normalize/streams/programs.ts';
import * as tables from '../normalize/tables/programs.ts';
import { defineStream } from './stream-definition.ts';

export const programs = defineStream({
  name: 'programs',
  path: '/api/programs/',
  description: 'Programs visible to the caller (spec 4.11.1).',
  table: tables.programs,
  otherTables: [tables.programFundingSources],
  mapping: programsStream,
  fields: sourceFields.programs,
});
