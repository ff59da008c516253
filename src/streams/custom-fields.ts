import { sourceFields } from '../normalize/source-fields.ts';
import { customFieldsStream } from '../normalize/streams/programs.ts';
import * as tables from '../normalize/tables/programs.ts';
import { defineStream } from './stream-definition.ts';

export const customFields = defineStream({
  name: 'custom_fields',
  path: '/api/customfields/',
  description: 'Custom field definitions (spec 4.4.1; needs `Custom fields`).',
  skipOn: { 403: 'needs the `Custom fields` permission' },
  table: tables.customFields,
  mapping: customFieldsStream,
  fields: sourceFields.custom_fields,
});
