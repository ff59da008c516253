import { applicationParent } from '../extract/stream-def.ts';
import { sourceFields } from '../normalize/source-fields.ts';
import { applicationNotesStream } from '../normalize/streams/applications.ts';
import * as tables from '../normalize/tables/applications.ts';
import { defineStream } from './stream-definition.ts';

export const applicationNotes = defineStream({
  name: 'application_notes',
  path: '/api/applications/{parent}/notes/',
  description: 'Notes on each application (spec 4.2.15).',
  parent: applicationParent,
  table: tables.applicationNotes,
  mapping: applicationNotesStream,
  fields: sourceFields.application_notes,
});
