import { applicationParent, byRefs, type StreamDef } from '../stream-def.ts';

export const applicationStages: StreamDef = {
  name: 'application_stages',
  path: '/api/applications/{parent}/stages/',
  description: 'Stage records of each application (spec 4.2.6; site administrators only).',
  keyOf: byRefs('stage'),
  parent: applicationParent,
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'stage records need a site administrator' },
};
