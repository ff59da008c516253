import type { JsonObject, JsonValue } from '../util/json.ts';
import { isJsonObject } from '../util/json.ts';
import type { Dataset } from './dataset.ts';
import { nowStamp } from './format.ts';
import { assignmentRecord } from './generate-misc.ts';
import { deleteApplication, recordWrite, replaceAll } from './mutations.ts';
import { orgWriteRoutes } from './org-write-routes.ts';
import { badRequest, noContent, notFound, ok, type Route, type RouteContext, type RouteResult } from './router.ts';
import { servedTask } from './task-answers.ts';

const bodyObject = (ctx: RouteContext): JsonObject => (isJsonObject(ctx.body) ? ctx.body : {});
const int = (v: JsonValue | undefined): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;

function patchApplication(ctx: RouteContext): RouteResult {
  const { ds } = ctx;
  const id = ctx.params['id'] ?? -1;
  const app = ds.applications.get(id);
  if (!app) return notFound();
  const body = bodyObject(ctx);
  const errors: JsonObject = {};
  if (typeof body['title'] === 'string') app['title'] = body['title'];
  if (typeof body['reference_id'] === 'string') app['reference_id'] = body['reference_id'];
  if (body['state'] !== undefined) {
    const s = int(body['state']);
    if (s === undefined || s < 0 || s > 3) errors['state'] = ['Must be 0, 1, 2 or 3.'];
    else app['state'] = s;
  }
  if (body['current_stage'] !== undefined) {
    const def = ds.stageDefs.get(int(body['current_stage']) ?? -1);
    if (!def) errors['current_stage'] = ['Unknown stage.'];
    else app['current_stage'] = { title: def.title, id: def.id };
  }
  if (body['organization'] !== undefined) {
    const org = body['organization'] === null ? null : ds.organizations.get(int(body['organization']) ?? -1);
    if (org === undefined) errors['organization'] = ['Unknown organization.'];
    else app['organization'] = org ? { id: org['id'] ?? 0, name: org['name'] ?? '' } : null;
  }
  if (Array.isArray(body['custom_fields'])) {
    const current = (app['custom_fields'] as JsonObject[]) ?? [];
    for (const cf of body['custom_fields']) {
      if (!isJsonObject(cf)) continue;
      const field = ds.customFields.get(int(cf['id']) ?? -1);
      if (!field) continue;
      const existing = current.find((c) => c['id'] === field['id']);
      if (existing) existing['value'] = String(cf['value'] ?? '');
      else current.push({ id: field['id'] ?? 0, name: field['name'] ?? '', value: String(cf['value'] ?? '') });
    }
  }
  if (Object.keys(errors).length > 0) return badRequest(errors);
  app['updated_at'] = nowStamp();
  recordWrite(ds, 'application_updated', 'PATCH', `/api/applications/${id}/`, { application: app }, id, 200);
  return ok(app);
}

function patchTask(ctx: RouteContext): RouteResult {
  const { ds } = ctx;
  const appId = ctx.params['id'] ?? -1;
  const task = ds.children(appId)?.tasks.find((t) => t['id'] === ctx.params['task_id']);
  if (!task) return notFound();
  const body = bodyObject(ctx);
  const status = int(body['status']);
  if (body['status'] !== undefined && (status === undefined || status < 1 || status > 3))
    return badRequest({ status: ['Must be 1, 2 or 3.'] });
  if (status !== undefined) task['status'] = status;
  if (typeof body['completed_at'] === 'string') task['completed_at'] = body['completed_at'];
  if (isJsonObject(body['data'])) task['data'] = { ...(task['data'] as JsonObject), ...body['data'] };
  // The parent application's updated_at deliberately does not move (real sites behave so).
  task['updated_at'] = nowStamp();
  recordWrite(
    ds,
    'task_updated',
    'PATCH',
    `/api/applications/${appId}/tasks/${String(task['id'])}/`,
    { application: ds.applications.get(appId) ?? null, task: { name: task['name'] ?? '', id: task['id'] ?? 0 } },
    task['id'] as number,
    200,
  );
  return ok(servedTask(task, ctx.config.answerShape));
}

export function addNote(ds: Dataset, appId: number, content: string, isPrivate: boolean): JsonObject | undefined {
  const children = ds.children(appId);
  if (!children) return undefined;
  const admin = ds.adminUser();
  const now = nowStamp();
  const note: JsonObject = {
    id: ds.nextNoteId(),
    author: admin.ref,
    author_role: 'admin',
    content,
    edited: false,
    created_at: now,
    updated_at: now,
    is_private: isPrivate,
  };
  children.notes.push(note);
  recordWrite(
    ds,
    'note_added',
    'POST',
    `/api/applications/${appId}/notes/`,
    { application: ds.applications.get(appId) ?? null },
    note['id'] as number,
    201,
  );
  return note;
}

function noteRoute(method: 'PATCH' | 'DELETE'): Route {
  return {
    method,
    template: '/api/applications/{id}/notes/{note_id}/',
    handler: (ctx) => {
      const appId = ctx.params['id'] ?? -1;
      const notes = ctx.ds.children(appId)?.notes;
      const index = notes?.findIndex((n) => n['id'] === ctx.params['note_id']) ?? -1;
      const note = notes?.[index];
      if (!notes || !note) return notFound();
      const app = ctx.ds.applications.get(appId) ?? null;
      if (method === 'DELETE') {
        notes.splice(index, 1);
        recordWrite(
          ctx.ds,
          'note_deleted',
          'DELETE',
          `/api/applications/${appId}/notes/${String(note['id'])}/`,
          { application: app },
          note['id'] as number,
          204,
        );
        return noContent;
      }
      const body = bodyObject(ctx);
      if (typeof body['content'] === 'string') note['content'] = body['content'];
      if (typeof body['is_private'] === 'boolean') note['is_private'] = body['is_private'];
      note['edited'] = true;
      note['updated_at'] = nowStamp();
      recordWrite(
        ctx.ds,
        'note_edited',
        'PATCH',
        `/api/applications/${appId}/notes/${String(note['id'])}/`,
        { application: app },
        note['id'] as number,
        200,
      );
      return ok(note);
    },
  };
}

function assignmentRoutes(template: '/api/assignments/' | '/api/teamassignments/', key: 'reviewer' | 'team'): Route[] {
  const pick = (ds: Dataset): JsonObject[] => (key === 'reviewer' ? ds.assignments : ds.teamAssignments);
  const who = (ds: Dataset, id: number): JsonObject | undefined => {
    if (key === 'reviewer') return ds.users.get(id)?.ref;
    const team = [...ds.teams.values()].flat().find((t) => t['id'] === id);
    return team ? { name: team['name'] ?? '', id } : undefined;
  };
  const same = (a: JsonObject, appId: number, stageId: number, whoId: number): boolean =>
    (a['application'] as JsonObject)['id'] === appId &&
    (a['stage'] as JsonObject)['id'] === stageId &&
    (a[key] as JsonObject)['id'] === whoId;
  return [
    {
      method: 'POST',
      template,
      permissions: ['Assign reviews'],
      handler: (ctx) => {
        const body = bodyObject(ctx);
        const stageId = int(body['stage']);
        const whoId = int(body[key]);
        const apps = Array.isArray(body['applications']) ? body['applications'].map((a) => int(a)) : [];
        const target = whoId === undefined ? undefined : who(ctx.ds, whoId);
        if (
          stageId === undefined ||
          !ctx.ds.stageDefs.has(stageId) ||
          !target ||
          whoId === undefined ||
          apps.length === 0 ||
          apps.some((a) => a === undefined || !ctx.ds.applications.get(a))
        )
          return badRequest({ detail: `applications (existing ids), stage and ${key} are required.` });
        const created: JsonObject[] = [];
        for (const appId of apps as number[]) {
          const list = pick(ctx.ds);
          const app = ctx.ds.applications.get(appId) as JsonObject;
          const existing = list.find((a) => same(a, appId, stageId, whoId));
          const record = assignmentRecord(ctx.ds, app, stageId, key, target, nowStamp());
          if (existing) Object.assign(existing, record);
          else list.push(record);
          created.push(existing ?? record);
          recordWrite(ctx.ds, `${key}_assigned`, 'POST', template, { application: app }, appId, 201);
        }
        return ok(created, 201);
      },
    },
    {
      method: 'DELETE',
      template,
      permissions: ['Assign reviews'],
      handler: (ctx) => {
        const appId = int(ctx.query.get('application') ?? undefined);
        const stageId = int(ctx.query.get('stage') ?? undefined);
        const whoId = int(ctx.query.get(key) ?? undefined);
        if (appId === undefined || stageId === undefined || whoId === undefined)
          return badRequest({ detail: `application, ${key} and stage are required query parameters.` });
        const list = pick(ctx.ds);
        replaceAll(
          list,
          list.filter((a) => !same(a, appId, stageId, whoId)),
        );
        recordWrite(
          ctx.ds,
          `${key}_unassigned`,
          'DELETE',
          template,
          { application: ctx.ds.applications.get(appId) ?? null },
          appId,
          204,
        );
        return noContent;
      },
    },
  ];
}

export const writeRoutes: readonly Route[] = [
  {
    method: 'PATCH',
    template: '/api/applications/{id}/',
    permissions: ['Application Create'],
    handler: patchApplication,
  },
  {
    method: 'DELETE',
    template: '/api/applications/{id}/',
    permissions: ['Delete Applications'],
    handler: (ctx) => {
      const id = ctx.params['id'] ?? -1;
      const app = ctx.ds.applications.get(id);
      if (!app || !deleteApplication(ctx.ds, id)) return notFound();
      recordWrite(ctx.ds, 'application_deleted', 'DELETE', `/api/applications/${id}/`, { application: app }, id, 204);
      return noContent;
    },
  },
  { method: 'PATCH', template: '/api/applications/{id}/tasks/{task_id}/', handler: patchTask },
  {
    method: 'POST',
    template: '/api/applications/{id}/notes/',
    handler: (ctx) => {
      const body = bodyObject(ctx);
      if (typeof body['content'] !== 'string') return badRequest({ content: ['This field is required.'] });
      const note = addNote(ctx.ds, ctx.params['id'] ?? -1, body['content'], body['is_private'] === true);
      return note ? ok(note, 201) : notFound();
    },
  },
  noteRoute('PATCH'),
  noteRoute('DELETE'),
  ...assignmentRoutes('/api/assignments/', 'reviewer'),
  ...assignmentRoutes('/api/teamassignments/', 'team'),
  ...orgWriteRoutes(),
];
