import { sourceFields } from '../normalize/source-fields.ts';
import { applicationsStream } from '../normalize/streams/applications.ts';
import * as tables from '../normalize/tables/applications.ts';
import { defineStream } from './stream-definition.ts';

export const applications = defineStream({
  name: 'applications',
  path: '/api/applications/',
  description: 'Applications (spec 4.2.1); parent of stages, tasks and notes.',
  table: tables.applications,
  otherTables: [tables.applicationCollaborators, tables.applicationLabels],
  mapping: applicationsStream,
  fields: sourceFields.applications,
});
