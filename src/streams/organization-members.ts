import { contentMarker } from './stream-def.ts';
import { S } from '../normalize/field-kinds.ts';
import { text } from '../normalize/coerce.ts';
import type { Row } from '../normalize/table-def.ts';
import { col, enumCol, ref } from './columns.ts';
import { defineStream } from './stream-definition.ts';

/** A member record is a UserRef plus is_admin/status: the user part goes to users. */
export const organizationMembers = defineStream({
  name: 'organization_members',
  path: '/api/organizations/{parent}/members/',
  description: 'Members of each organization (spec 4.9.6).',
  parent: { stream: 'organizations', marker: contentMarker },
  skipOn: { 403: 'needs an organization administrator or `Assume role`' },
  table: {
    name: 'organization_members',
    kind: 'entity',
    description: 'Members of organizations (GET /api/organizations/{id}/members/); names and email are in users.',
    primaryKey: ['organization_id', 'user_id'],
    columns: [
      ref('organization_id', 'organizations', 'Organization.', { notNull: true, read: 'parent' }),
      // The record is the user itself: its own id, not a reference to read.
      ref('user_id', 'users', 'Member (user).', { notNull: true, source: 'id', read: 'key' }),
      col('is_admin', 'boolean', 'Member is an organization administrator.'),
      enumCol('status', 'member_status', 'Membership status (enum member_status: 0 Inactive, 1 Active).'),
    ],
  },
  reads: { first_name: S, last_name: S, email: S },
  finish(r, row, out) {
    const user: Row = {
      id: row.user_id!,
      _raw: JSON.stringify({
        id: r.id,
        first_name: r.first_name ?? null,
        last_name: r.last_name ?? null,
        email: r.email ?? null,
      }),
    };
    if (r.first_name != null) user.first_name = text(r.first_name);
    if (r.last_name != null) user.last_name = text(r.last_name);
    if (r.email != null) user.email = text(r.email);
    out.push({ table: 'users', row: user, merge: 'coalesce' });
  },
});
