import type { JsonObject } from '../util/json.ts';
import { builtinStreams, type StreamName } from '../streams/registry.ts';
import type { Collection } from './collection.ts';
import type { Dataset } from './dataset.ts';
import type { ExtraListRows } from './options.ts';
import { notFound, ok, type Route, type RouteContext, type RouteResult } from './router.ts';
import { routeTemplate, streamServing, type StreamServing } from './stream-serving.ts';
import { servedTask } from './task-answers.ts';

/** The GET route of one stream, at its path, answering as `serving` says. */
function streamRoute(path: string, serving: StreamServing): Route {
  const access = { permissions: serving.permissions, feature: serving.feature };
  const handler = (ctx: RouteContext): RouteResult => {
    const parentId = ctx.params['id'];
    switch (serving.shape) {
      case 'list': {
        const rows = serving.records(ctx.ds, parentId, ctx.config);
        if (typeof rows === 'string') return notFound(rows);
        return { list: rows, desc: serving.desc ?? false, filters: serving.filters ?? [] };
      }
      case 'object': {
        const row = serving.record(ctx.ds, parentId, ctx.config);
        return typeof row === 'string' ? notFound(row) : ok(row);
      }
      case 'download': {
        const file = serving.file(ctx.ds, parentId, ctx.config);
        return typeof file === 'string' ? notFound(file) : { status: 200, file };
      }
    }
  };
  return { method: 'GET', template: routeTemplate(path), ...access, handler };
}

/** Every built-in stream's route, made from the registry: one per stream, at the path the stream declares. */
export const streamRoutes: readonly Route[] = builtinStreams.map((s) => streamRoute(s.path, streamServing[s.name]));

/** The route of an extra list (a stream a test adds in a catalog of its own): paginated like every list, no filters. */
export function extraListRoute(path: string, rows: ExtraListRows): Route {
  return streamRoute(path, {
    shape: 'list',
    records: (_ds, parentId) => {
      if (typeof rows !== 'function') return rows;
      return rows(parentId ?? -1) ?? 'Not found.';
    },
  });
}

/** The detail route's access is its stream's: the same permissions and feature as the list. */
function detail(template: string, stream: StreamName, pick: (ds: Dataset) => Collection): Route {
  const { permissions, feature } = streamServing[stream];
  return {
    method: 'GET',
    template,
    permissions,
    feature,
    handler: (ctx) => {
      const row = pick(ctx.ds).get(ctx.params['id'] ?? -1);
      return row ? ok(row) : notFound();
    },
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

function orgChildDetail(pick: (ds: Dataset) => Map<number, JsonObject[]>, param: string) {
  return (ctx: RouteContext): RouteResult => {
    const row = pick(ctx.ds)
      .get(ctx.params['id'] ?? -1)
      ?.find((r) => r['id'] === ctx.params[param]);
    return row ? ok(row) : notFound();
  };
}

/** The detail routes (`.../{id}/`): one record each, beside the stream lists. */
export const detailRoutes: readonly Route[] = [
  detail('/api/activity/{id}/', 'activity', (ds) => ds.activity),
  detail('/api/applications/{id}/', 'applications', (ds) => ds.applications),
  { method: 'GET', template: '/api/applications/{id}/stages/{stage_id}/', handler: childDetail('stages', 'stage_id') },
  { method: 'GET', template: '/api/applications/{id}/tasks/{task_id}/', handler: childDetail('tasks', 'task_id') },
  { method: 'GET', template: '/api/applications/{id}/notes/{note_id}/', handler: childDetail('notes', 'note_id') },
  detail('/api/customfields/{id}/', 'custom_fields', (ds) => ds.customFields),
  detail('/api/financial-transactions/{id}/', 'financial_transactions', (ds) => ds.transactions),
  detail('/api/funds/{id}/', 'funds', (ds) => ds.funds),
  detail('/api/budgets/{id}/', 'budgets', (ds) => ds.budgets),
  detail('/api/awards/{id}/', 'awards', (ds) => ds.awards),
  detail('/api/payments/{id}/', 'payments', (ds) => ds.payments),
  detail('/api/organizations/{id}/', 'organizations', (ds) => ds.organizations),
  {
    method: 'GET',
    template: '/api/organizations/{id}/members/{user_id}/',
    permissions: streamServing.organization_members.permissions,
    handler: orgChildDetail((ds) => ds.members, 'user_id'),
  },
  {
    method: 'GET',
    template: '/api/organizations/{id}/teams/{team_id}/',
    permissions: streamServing.organization_teams.permissions,
    handler: orgChildDetail((ds) => ds.teams, 'team_id'),
  },
  detail('/api/programs/{id}/', 'programs', (ds) => ds.programs),
  detail('/api/reports/{id}/', 'reports', (ds) => ds.reports),
];

/** Every GET of the site's records: the stream lists (from the registry) and the detail routes. */
export const readRoutes: readonly Route[] = [...streamRoutes, ...detailRoutes];
