import type { JsonObject } from '../util/json.ts';
import type { Collection } from './collection.ts';
import type { Dataset } from './dataset.ts';
import { notFound, ok, type Route, type RouteContext, type RouteResult } from './router.ts';
import { servedTask } from './task-answers.ts';

const FIN = ['Financial Management'];

function list(
  template: string,
  pick: (ds: Dataset) => readonly JsonObject[],
  filters: readonly string[] = [],
  extra: Partial<Route> = {},
  desc = false,
): Route {
  return { method: 'GET', template, ...extra, handler: (ctx) => ({ list: pick(ctx.ds), desc, filters }) };
}

function detail(template: string, pick: (ds: Dataset) => Collection, extra: Partial<Route> = {}): Route {
  return {
    method: 'GET',
    template,
    ...extra,
    handler: (ctx) => {
      const row = pick(ctx.ds).get(ctx.params['id'] ?? -1);
      return row ? ok(row) : notFound();
    },
  };
}

/** Children of an application, or 404 when the application does not exist. */
function childList(kind: 'stages' | 'tasks' | 'notes') {
  return (ctx: RouteContext): RouteResult => {
    const children = ctx.ds.children(ctx.params['id'] ?? -1);
    if (!children) return notFound('Application not found.');
    const list = kind === 'tasks' ? children.tasks.map((t) => servedTask(t, ctx.config.answerShape)) : children[kind];
    return { list };
  };
}

function childDetail(kind: 'stages' | 'tasks' | 'notes', param: string) {
  return (ctx: RouteContext): RouteResult => {
    const children = ctx.ds.children(ctx.params['id'] ?? -1);
    const row = children?.[kind].find((r) => r['id'] === ctx.params[param]);
    if (!row) return notFound();
    return ok(kind === 'tasks' ? servedTask(row, ctx.config.answerShape) : row);
  };
}

function orgChild(pick: (ds: Dataset, orgId: number) => JsonObject[] | undefined) {
  return (ctx: RouteContext): RouteResult => {
    const orgId = ctx.params['id'] ?? -1;
    if (!ctx.ds.organizations.get(orgId)) return notFound('Organization not found.');
    return { list: pick(ctx.ds, orgId) ?? [] };
  };
}

const VIEW = ['View Applications'];
const ORG_ADMIN = ['Assume role'];

export const readRoutes: readonly Route[] = [
  list(
    '/api/activity/',
    (ds) => ds.activity.rows,
    ['actor', 'application', 'program', 'organization', 'category', 'created_at'],
    {},
    true,
  ),
  detail('/api/activity/{id}/', (ds) => ds.activity),
  list(
    '/api/applications/',
    (ds) => ds.applications.rows,
    [
      'applicant',
      'average_score',
      'created_at',
      'current_stage',
      'overall_score',
      'program',
      'reference_id',
      'state',
      'title',
      'weighted_score',
    ],
    { permissions: VIEW },
  ),
  detail('/api/applications/{id}/', (ds) => ds.applications, { permissions: VIEW }),
  { method: 'GET', template: '/api/applications/{id}/stages/', handler: childList('stages') },
  { method: 'GET', template: '/api/applications/{id}/stages/{stage_id}/', handler: childDetail('stages', 'stage_id') },
  { method: 'GET', template: '/api/applications/{id}/tasks/', handler: childList('tasks') },
  { method: 'GET', template: '/api/applications/{id}/tasks/{task_id}/', handler: childDetail('tasks', 'task_id') },
  { method: 'GET', template: '/api/applications/{id}/notes/', handler: childList('notes') },
  { method: 'GET', template: '/api/applications/{id}/notes/{note_id}/', handler: childDetail('notes', 'note_id') },
  list('/api/assignments/', (ds) => ds.assignments, ['application', 'program', 'reviewer', 'stage', 'updated_at'], {
    permissions: ['Assign reviews'],
  }),
  list('/api/teamassignments/', (ds) => ds.teamAssignments, ['application', 'program', 'team', 'stage', 'updated_at'], {
    permissions: ['Assign reviews'],
  }),
  list('/api/customfields/', (ds) => ds.customFields.rows, ['name', 'required', 'type'], {
    permissions: ['Custom fields'],
  }),
  detail('/api/customfields/{id}/', (ds) => ds.customFields, { permissions: ['Custom fields'] }),
  list('/api/financial-transactions/', (ds) => ds.transactions.rows, [], {
    permissions: FIN,
    feature: 'financialManagement',
  }),
  detail('/api/financial-transactions/{id}/', (ds) => ds.transactions, {
    permissions: FIN,
    feature: 'financialManagement',
  }),
  list('/api/funds/', (ds) => ds.funds.rows, [], {
    permissions: [...FIN, 'View/Edit Funds'],
    feature: 'financialManagement',
  }),
  detail('/api/funds/{id}/', (ds) => ds.funds, {
    permissions: [...FIN, 'View/Edit Funds'],
    feature: 'financialManagement',
  }),
  list('/api/budgets/', (ds) => ds.budgets.rows, [], { permissions: FIN, feature: 'financialManagement' }),
  detail('/api/budgets/{id}/', (ds) => ds.budgets, { permissions: FIN, feature: 'financialManagement' }),
  list('/api/awards/', (ds) => ds.awards.rows, [], { permissions: VIEW }),
  detail('/api/awards/{id}/', (ds) => ds.awards, { permissions: VIEW }),
  list('/api/payments/', (ds) => ds.payments.rows, [], { permissions: ['Award Applications'] }),
  detail('/api/payments/{id}/', (ds) => ds.payments, { permissions: ['Award Applications'] }),
  list(
    '/api/log/',
    (ds) => ds.log.rows,
    ['actor', 'object_id', 'parent_id', 'role', 'status_code', 'timestamp', 'url'],
    {},
    true,
  ),
  list('/api/organizations/', (ds) => ds.organizations.rows, [], { permissions: ['View users'] }),
  detail('/api/organizations/{id}/', (ds) => ds.organizations, { permissions: ['View users'] }),
  {
    method: 'GET',
    template: '/api/organizations/{id}/members/',
    permissions: ORG_ADMIN,
    handler: orgChild((ds, id) => ds.members.get(id)),
  },
  {
    method: 'GET',
    template: '/api/organizations/{id}/members/{user_id}/',
    permissions: ORG_ADMIN,
    handler: (ctx) => {
      const row = ctx.ds.members.get(ctx.params['id'] ?? -1)?.find((m) => m['id'] === ctx.params['user_id']);
      return row ? ok(row) : notFound();
    },
  },
  {
    method: 'GET',
    template: '/api/organizations/{id}/teams/',
    permissions: ORG_ADMIN,
    handler: orgChild((ds, id) => ds.teams.get(id)),
  },
  {
    method: 'GET',
    template: '/api/organizations/{id}/teams/{team_id}/',
    permissions: ORG_ADMIN,
    handler: (ctx) => {
      const row = ctx.ds.teams.get(ctx.params['id'] ?? -1)?.find((t) => t['id'] === ctx.params['team_id']);
      return row ? ok(row) : notFound();
    },
  },
  {
    method: 'GET',
    template: '/api/organizations/{id}/eligibility/',
    permissions: ORG_ADMIN,
    feature: 'eligibility',
    handler: (ctx) => {
      const row = ctx.ds.eligibility.get(ctx.params['id'] ?? -1);
      return row ? ok(row) : notFound('This organization has no eligibility responses.');
    },
  },
  list('/api/programs/', (ds) => ds.programs.rows, ['name', 'launched', 'active', 'open_datetime', 'close_datetime']),
  detail('/api/programs/{id}/', (ds) => ds.programs),
  list(
    '/api/reports/',
    (ds) => ds.reports.rows,
    ['created_by', 'last_generated_at', 'program', 'status', 'source', 'name', 'id'],
    { permissions: ['Reports'] },
  ),
  detail('/api/reports/{id}/', (ds) => ds.reports, { permissions: ['Reports'] }),
];
