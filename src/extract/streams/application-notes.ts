import { byId, sameUpdatedAtMarker, updatedAtMarker, type StreamDef } from '../stream-def.ts';

export const applicationNotes: StreamDef = {
  name: 'application_notes',
  path: '/api/applications/{parent}/notes/',
  description: 'Notes on each application (spec 4.2.15).',
  keyOf: byId,
  parent: { stream: 'applications', marker: updatedAtMarker, unchanged: sameUpdatedAtMarker },
  shape: 'list',
  mode: 'scan',
};
