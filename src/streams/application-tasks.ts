import { applicationParent } from '../extract/stream-def.ts';
import { sourceFields } from '../normalize/source-fields.ts';
import { applicationTasksStream } from '../normalize/streams/applications.ts';
import * as tables from '../normalize/tables/applications.ts';
import { defineStream } from './stream-definition.ts';

export const applicationTasks = defineStream({
  name: 'application_tasks',
  path: '/api/applications/{parent}/tasks/',
  description: 'Tasks of each application with their responses (spec 4.2.9).',
  parent: applicationParent,
  table: tables.applicationTasks,
  otherTables: [tables.taskResponses],
  mapping: applicationTasksStream,
  fields: sourceFields.application_tasks,
});
