import { applicationParent, byRefs } from '../extract/stream-def.ts';
import { sourceFields } from '../normalize/source-fields.ts';
import { applicationStagesStream } from '../normalize/streams/applications.ts';
import * as tables from '../normalize/tables/applications.ts';
import { defineStream } from './stream-definition.ts';

export const applicationStages = defineStream({
  name: 'application_stages',
  path: '/api/applications/{parent}/stages/',
  description: 'Stage records of each application (spec 4.2.6; site administrators only).',
  keyOf: byRefs('stage'),
  parent: applicationParent,
  skipOn: { 403: 'stage records need a site administrator' },
  table: tables.applicationStages,
  mapping: applicationStagesStream,
  fields: sourceFields.application_stages,
});
