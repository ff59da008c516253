import { applicationParent, byId, type StreamDef } from '../stream-def.ts';

export const applicationTasks: StreamDef = {
  name: 'application_tasks',
  path: '/api/applications/{parent}/tasks/',
  description: 'Tasks of each application with their responses (spec 4.2.9).',
  keyOf: byId,
  parent: applicationParent,
  shape: 'list',
  mode: 'scan',
};
