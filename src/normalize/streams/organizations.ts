import { arr, bool, int, obj, optId, reqId, reqTs, text, untyped } from '../coerce.ts';
import type { MappedRow, StreamMapping } from '../mapping.ts';
import { customFieldValues, customFieldValuesScope, parentId, userRef } from '../refs.ts';
import type { Row } from '../table-def.ts';

const orgChildren = ['organization_members', 'teams', 'eligibility', 'eligibility_responses'] as const;

/** A caller without full rights receives OrgRef (id, name) instead: the other columns are then NULL. */
export const organizationsStream: StreamMapping = {
  owns: [{ table: 'organizations', idColumn: 'id' }, customFieldValuesScope('organization')],
  cascades: orgChildren.map((table) => ({
    table,
    column: 'organization_id',
    parentTable: 'organizations',
    parentColumn: 'id',
  })),
  map(r) {
    const out: MappedRow[] = [];
    const id = reqId(r.id, 'id');
    const row: Row = {
      id,
      name: text(r.name),
      status: int(r.status),
      primary_admin_id: userRef(out, r.primary_admin, 'primary_admin'),
      allow_collaborators: bool(r.allow_collaborators),
      email: text(r.email),
      phone: text(r.phone),
      website: text(r.website),
      address: text(r.address),
      city: text(r.city),
      country: text(r.country),
      tax_country: int(r.tax_country),
      tax_number: text(r.tax_number),
      logo_url: text(r.logo_url),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'organizations', row, merge: 'replace' });
    customFieldValues(out, 'organization', id, r.custom_fields);
    return out;
  },
};

/** A member record is a UserRef plus is_admin/status: the user part goes to users. */
export const organizationMembersStream: StreamMapping = {
  owns: [{ table: 'organization_members', parentColumn: 'organization_id' }],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const organizationId = parentId(ctx, 'organization_members');
    const userId = reqId(r.id, 'id');
    const user: Row = {
      id: userId,
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
    out.push(
      {
        table: 'organization_members',
        row: {
          organization_id: organizationId,
          user_id: userId,
          is_admin: bool(r.is_admin),
          status: int(r.status),
          _raw: JSON.stringify(r),
        },
        merge: 'replace',
      },
      { table: 'users', row: user, merge: 'coalesce' },
    );
    return out;
  },
};

export const organizationTeamsStream: StreamMapping = {
  owns: [{ table: 'teams', parentColumn: 'organization_id' }],
  cascades: [{ table: 'team_assignments', column: 'team_id', parentTable: 'teams', parentColumn: 'id' }],
  map(r, ctx) {
    const row: Row = {
      id: reqId(r.id, 'id'),
      name: text(r.name),
      organization_id: parentId(ctx, 'organization_teams'),
      _raw: JSON.stringify(r),
    };
    return [{ table: 'teams', row, merge: 'replace' }];
  },
};

/**
 * One object per organization. Response question ids may repeat across tasks, so each response is keyed by
 * (question_id, occurrence of that id within the object).
 */
export const eligibilityStream: StreamMapping = {
  owns: [
    { table: 'eligibility', parentColumn: 'organization_id' },
    { table: 'eligibility_responses', parentColumn: 'organization_id', from: { key: 'responses', shape: 'array' } },
  ],
  cascades: [],
  map(r, ctx) {
    const z = ctx.siteTimeZone;
    const organizationId = parentId(ctx, 'eligibility');
    const out: MappedRow[] = [
      {
        table: 'eligibility',
        row: {
          organization_id: organizationId,
          is_completed: bool(r.is_completed),
          created_at: reqTs(r.created_at, z, 'created_at'),
          updated_at: reqTs(r.updated_at, z, 'updated_at'),
          _raw: JSON.stringify(r),
        },
        merge: 'replace',
      },
    ];
    const seen = new Map<string, number>();
    arr(r.responses).forEach((x, position) => {
      const resp = obj(x);
      if (resp === null) return;
      // Ids are strings in the spec; integers are accepted as their text.
      const qid = typeof resp.id === 'number' ? String(optId(resp.id, 'responses[].id')) : text(resp.id);
      if (qid === null) return untyped(resp); // no key: kept in eligibility._raw, counted
      const occurrence = seen.get(qid) ?? 0;
      seen.set(qid, occurrence + 1);
      out.push({
        table: 'eligibility_responses',
        row: {
          organization_id: organizationId,
          question_id: qid,
          occurrence,
          position,
          name: text(resp.name),
          response: text(resp.response),
          _raw: JSON.stringify(resp),
        },
        merge: 'replace',
      });
    });
    return out;
  },
};
