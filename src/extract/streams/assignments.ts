import { byRefs, type StreamDef } from '../stream-def.ts';

export const assignments: StreamDef = {
  name: 'assignments',
  path: '/api/assignments/',
  description: 'Reviewer assignments (spec 4.3.1; needs `Assign reviews`).',
  keyOf: byRefs('application', 'reviewer', 'stage'),
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'needs the `Assign reviews` permission' },
};
