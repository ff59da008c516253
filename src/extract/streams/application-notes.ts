import { applicationParent, byId, type StreamDef } from '../stream-def.ts';

export const applicationNotes: StreamDef = {
  name: 'application_notes',
  path: '/api/applications/{parent}/notes/',
  description: 'Notes on each application (spec 4.2.15).',
  keyOf: byId,
  parent: applicationParent,
  shape: 'list',
  mode: 'scan',
};
