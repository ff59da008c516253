import { byRefs, type StreamDef } from '../stream-def.ts';

export const teamAssignments: StreamDef = {
  name: 'team_assignments',
  path: '/api/teamassignments/',
  description: 'Team assignments (spec 4.3.4; needs `Assign reviews`).',
  keyOf: byRefs('application', 'team', 'stage'),
  shape: 'list',
  mode: 'scan',
  skipOn: { 403: 'needs the `Assign reviews` permission' },
};
