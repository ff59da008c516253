import { contentMarker } from './stream-def.ts';
import { col, id, ref } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const organizationTeams = defineStream({
  name: 'organization_teams',
  path: '/api/organizations/{parent}/teams/',
  description: 'Teams of each organization (spec 4.9.11).',
  parent: { stream: 'organizations', marker: contentMarker },
  skipOn: { 403: 'needs an organization administrator or `Assume role`' },
  cascades: [{ table: 'team_assignments', column: 'team_id', parentTable: 'teams', parentColumn: 'id' }],
  table: {
    name: 'teams',
    kind: 'entity',
    description:
      'Reviewer teams: rows of the organization_teams stream, plus TeamRef references from team assignments (ref-only rows).',
    primaryKey: ['id'],
    columns: [
      id('Team id.'),
      col('name', 'text', 'Team name.'),
      ref(
        'organization_id',
        'organizations',
        'Organization the team was listed under (NULL for teams known only from references).',
        { read: 'parent' },
      ),
    ],
  },
});
