import type { JsonObject, JsonValue } from '../util/json.ts';
import { isJsonObject } from '../util/json.ts';
import type { Dataset } from './dataset.ts';
import { memberRecord } from './generate-orgs.ts';
import { deleteOrganization, recordWrite } from './mutations.ts';
import { badRequest, noContent, notFound, ok, type Route, type RouteContext, type RouteResult } from './router.ts';

const bodyObject = (ctx: RouteContext): JsonObject => (isJsonObject(ctx.body) ? ctx.body : {});
const ORG_STRING_FIELDS = [
  'name',
  'city',
  'country',
  'address',
  'email',
  'website',
  'phone',
  'tax_number',
  'logo_url',
] as const;

/** Applies an Organization write shape; returns field errors (empty when fine). */
function applyOrgFields(ds: Dataset, org: JsonObject, body: JsonObject): JsonObject {
  const errors: JsonObject = {};
  for (const k of ORG_STRING_FIELDS) if (typeof body[k] === 'string') org[k] = body[k];
  for (const k of ['allow_collaborators'] as const) if (typeof body[k] === 'boolean') org[k] = body[k];
  for (const k of ['tax_country', 'status'] as const) if (typeof body[k] === 'number') org[k] = body[k];
  if (body['primary_admin'] !== undefined) {
    const user = ds.users.get(typeof body['primary_admin'] === 'number' ? body['primary_admin'] : -1);
    if (!user) errors['primary_admin'] = ['Unknown user.'];
    else org['primary_admin'] = user.ref;
  }
  return errors;
}

function withOrg(ctx: RouteContext, fn: (org: JsonObject, orgId: number) => RouteResult): RouteResult {
  const orgId = ctx.params['id'] ?? -1;
  const org = ctx.ds.organizations.get(orgId);
  return org ? fn(org, orgId) : notFound('Organization not found.');
}

const str = (v: JsonValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

export function orgWriteRoutes(): Route[] {
  return [
    {
      method: 'POST',
      template: '/api/organizations/',
      permissions: ['Manually add users'],
      handler: (ctx) => {
        const body = bodyObject(ctx);
        if (!str(body['name'])) return badRequest({ name: ['This field is required.'] });
        const id = ctx.ds.organizations.maxId() + 1;
        const org: JsonObject = {
          id,
          name: '',
          allow_collaborators: false,
          city: '',
          country: '',
          address: '',
          email: '',
          website: '',
          phone: '',
          tax_country: 0,
          tax_number: '',
          primary_admin: ctx.ds.adminUser().ref,
          custom_fields: [],
          logo_url: '',
          status: 2,
        };
        const errors = applyOrgFields(ctx.ds, org, body);
        if (Object.keys(errors).length > 0) return badRequest(errors);
        ctx.ds.organizations.insert(org);
        const primary = ctx.ds.users.get((org['primary_admin'] as JsonObject)['id'] as number);
        ctx.ds.members.set(id, primary ? [memberRecord(primary, true)] : []);
        ctx.ds.teams.set(id, []);
        recordWrite(ctx.ds, 'organization_created', 'POST', '/api/organizations/', { organization: org }, id, 201);
        return ok(org, 201);
      },
    },
    {
      method: 'PATCH',
      template: '/api/organizations/{id}/',
      permissions: ['Assume role'],
      handler: (ctx) =>
        withOrg(ctx, (org, id) => {
          const errors = applyOrgFields(ctx.ds, org, bodyObject(ctx));
          if (Object.keys(errors).length > 0) return badRequest(errors);
          recordWrite(
            ctx.ds,
            'organization_updated',
            'PATCH',
            `/api/organizations/${id}/`,
            { organization: org },
            id,
            200,
          );
          return ok(org);
        }),
    },
    {
      method: 'DELETE',
      template: '/api/organizations/{id}/',
      permissions: ['Delete users'],
      handler: (ctx) =>
        withOrg(ctx, (org, id) => {
          deleteOrganization(ctx.ds, id);
          recordWrite(
            ctx.ds,
            'organization_deleted',
            'DELETE',
            `/api/organizations/${id}/`,
            { organization: org },
            id,
            204,
          );
          return noContent;
        }),
    },
    {
      method: 'POST',
      template: '/api/organizations/{id}/members/',
      permissions: ['Assume role'],
      handler: (ctx) =>
        withOrg(ctx, (org, id) => {
          const body = bodyObject(ctx);
          const email = str(body['email']);
          const user = [...ctx.ds.users.values()].find((u) => u.email === email);
          if (!user) return badRequest({ email: ['The member must already be a user.'] });
          const members = ctx.ds.members.get(id) ?? [];
          if (members.some((m) => m['id'] === user.id)) return badRequest({ email: ['Already a member.'] });
          const member = memberRecord(user, body['is_admin'] === true, body['status'] === 0 ? 0 : 1);
          members.push(member);
          ctx.ds.members.set(id, members);
          recordWrite(
            ctx.ds,
            'member_added',
            'POST',
            `/api/organizations/${id}/members/`,
            { organization: org },
            user.id,
            201,
          );
          return ok(member, 201);
        }),
    },
    memberRoute('PATCH'),
    memberRoute('DELETE'),
    {
      method: 'POST',
      template: '/api/organizations/{id}/teams/',
      permissions: ['Assume role'],
      handler: (ctx) =>
        withOrg(ctx, (org, id) => {
          const name = str(bodyObject(ctx)['name']);
          if (!name) return badRequest({ name: ['This field is required.'] });
          const team = { name, id: ctx.ds.nextTeamId() };
          const teams = ctx.ds.teams.get(id) ?? [];
          teams.push(team);
          ctx.ds.teams.set(id, teams);
          recordWrite(
            ctx.ds,
            'team_created',
            'POST',
            `/api/organizations/${id}/teams/`,
            { organization: org },
            team.id,
            201,
          );
          return ok({ name }, 201);
        }),
    },
    teamRoute('PATCH'),
    teamRoute('DELETE'),
    eligibilityRoute('PUT'),
    eligibilityRoute('PATCH'),
    eligibilityRoute('DELETE'),
  ];
}

/** Body shape is a spec gap: `is_completed` and `responses` ({id, name, response}) are accepted. */
function eligibilityRoute(method: 'PUT' | 'PATCH' | 'DELETE'): Route {
  return {
    method,
    template: '/api/organizations/{id}/eligibility/',
    permissions: ['Assume role'],
    feature: 'eligibility',
    handler: (ctx) =>
      withOrg(ctx, (org, id) => {
        const existing = ctx.ds.eligibility.get(id);
        if (method !== 'PUT' && !existing) return notFound('This organization has no eligibility responses.');
        if (method === 'DELETE') {
          ctx.ds.eligibility.delete(id);
          recordWrite(
            ctx.ds,
            'eligibility_deleted',
            'DELETE',
            `/api/organizations/${id}/eligibility/`,
            { organization: org },
            id,
            204,
          );
          return noContent;
        }
        const now = new Date().toISOString();
        const row: JsonObject = existing ?? { created_at: now, updated_at: now, is_completed: false, responses: [] };
        const body = bodyObject(ctx);
        if (typeof body['is_completed'] === 'boolean') row['is_completed'] = body['is_completed'];
        if (Array.isArray(body['responses'])) row['responses'] = body['responses'].filter(isJsonObject);
        row['updated_at'] = now;
        ctx.ds.eligibility.set(id, row);
        recordWrite(
          ctx.ds,
          'eligibility_updated',
          method,
          `/api/organizations/${id}/eligibility/`,
          { organization: org },
          id,
          method === 'PUT' && !existing ? 201 : 200,
        );
        return ok(row, method === 'PUT' && !existing ? 201 : 200);
      }),
  };
}

function memberRoute(method: 'PATCH' | 'DELETE'): Route {
  return {
    method,
    template: '/api/organizations/{id}/members/{user_id}/',
    permissions: ['Assume role'],
    handler: (ctx) =>
      withOrg(ctx, (org, id) => {
        const members = ctx.ds.members.get(id) ?? [];
        const index = members.findIndex((m) => m['id'] === ctx.params['user_id']);
        const member = members[index];
        if (!member) return notFound('Member not found.');
        const userId = member['id'] as number;
        if (method === 'DELETE') {
          const primaryId = (org['primary_admin'] as JsonObject)['id'];
          if (primaryId === userId) return badRequest({ detail: 'The primary admin cannot be removed.' });
          members.splice(index, 1);
          // The member's applications go to the primary admin.
          const primary = ctx.ds.users.get(primaryId as number);
          for (const app of ctx.ds.applications.rows) {
            if (
              (app['organization'] as JsonObject | null)?.['id'] === id &&
              (app['applicant'] as JsonObject)['id'] === userId &&
              primary
            ) {
              app['applicant'] = primary.ref;
              app['updated_at'] = new Date().toISOString();
            }
          }
          recordWrite(
            ctx.ds,
            'member_removed',
            'DELETE',
            `/api/organizations/${id}/members/${userId}/`,
            { organization: org },
            userId,
            204,
          );
          return noContent;
        }
        const body = bodyObject(ctx);
        if (typeof body['is_admin'] === 'boolean') member['is_admin'] = body['is_admin'];
        if (body['status'] === 0 || body['status'] === 1) member['status'] = body['status'];
        recordWrite(
          ctx.ds,
          'member_updated',
          'PATCH',
          `/api/organizations/${id}/members/${userId}/`,
          { organization: org },
          userId,
          200,
        );
        return ok(member);
      }),
  };
}

function teamRoute(method: 'PATCH' | 'DELETE'): Route {
  return {
    method,
    template: '/api/organizations/{id}/teams/{team_id}/',
    permissions: ['Assume role'],
    handler: (ctx) =>
      withOrg(ctx, (org, id) => {
        const teams = ctx.ds.teams.get(id) ?? [];
        const index = teams.findIndex((t) => t['id'] === ctx.params['team_id']);
        const team = teams[index];
        if (!team) return notFound('Team not found.');
        const teamId = team['id'] as number;
        if (method === 'DELETE') {
          teams.splice(index, 1);
          recordWrite(
            ctx.ds,
            'team_deleted',
            'DELETE',
            `/api/organizations/${id}/teams/${teamId}/`,
            { organization: org },
            teamId,
            204,
          );
          return noContent;
        }
        const name = str(bodyObject(ctx)['name']);
        if (!name) return badRequest({ name: ['This field is required.'] });
        team['name'] = name;
        recordWrite(
          ctx.ds,
          'team_updated',
          'PATCH',
          `/api/organizations/${id}/teams/${teamId}/`,
          { organization: org },
          teamId,
          200,
        );
        return ok({ name });
      }),
  };
}
