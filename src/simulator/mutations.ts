import type { JsonObject } from '../util/json.ts';
import type { Dataset, SimUser } from './dataset.ts';
import { nowStamp } from './format.ts';

export interface ActivityRefs {
  readonly application?: JsonObject | null;
  readonly organization?: JsonObject | null;
  readonly task?: JsonObject | null;
  readonly stage?: JsonObject | null;
}

/** Every write leaves an activity item (newest first in /api/activity/) and an API log entry. */
export function recordWrite(
  ds: Dataset,
  type: string,
  method: string,
  url: string,
  refs: ActivityRefs,
  objectId: number,
  status: number,
): void {
  ds.version++;
  const admin = ds.adminUser();
  const app = refs.application ?? null;
  const now = nowStamp();
  ds.activity.insert({
    id: ds.activity.maxId() + 1,
    actor: admin.ref,
    actor_role: 'admin',
    created_at: now,
    category: false,
    type,
    application: app ? { title: app['title'] ?? '', id: app['id'] ?? 0 } : null,
    program: app?.['program'] ?? null,
    stage: refs.stage ?? (app?.['current_stage'] as JsonObject | undefined) ?? null,
    task: refs.task ?? null,
    organization: refs.organization
      ? { id: refs.organization['id'] ?? 0, name: refs.organization['name'] ?? '' }
      : (app?.['organization'] ?? null),
  });
  ds.log.insert({
    id: ds.log.maxId() + 1,
    actor: admin.ref,
    elapsed: 12.5,
    info: {},
    method,
    object_id: objectId,
    parent_id: (app?.['id'] as number | undefined) ?? 0,
    role: 'admin',
    status_code: status,
    timestamp: now,
    url,
  });
}

/** Removes an application and everything hanging off it (stage records, tasks, notes, assignments). */
export function deleteApplication(ds: Dataset, appId: number): boolean {
  const app = ds.applications.remove(appId);
  if (!app) return false;
  ds.version++;
  ds.forgetChildren(appId);
  const keep = (a: JsonObject): boolean => (a['application'] as JsonObject | null)?.['id'] !== appId;
  replaceAll(ds.assignments, ds.assignments.filter(keep));
  replaceAll(ds.teamAssignments, ds.teamAssignments.filter(keep));
  return true;
}

export function replaceAll<T>(target: T[], items: readonly T[]): void {
  target.length = 0;
  for (const item of items) target.push(item);
}

/** Deletes an organization and all its applications (spec 4.9.5). */
export function deleteOrganization(ds: Dataset, orgId: number): number[] {
  if (!ds.organizations.remove(orgId)) return [];
  const appIds = ds.applications.rows
    .filter((a) => (a['organization'] as JsonObject | null)?.['id'] === orgId)
    .map((a) => a['id'] as number);
  for (const id of appIds) deleteApplication(ds, id);
  ds.members.delete(orgId);
  ds.teams.delete(orgId);
  ds.eligibility.delete(orgId);
  return appIds;
}

/** A new last name everywhere the user shows: the UserRef every record shares, and organization member records. */
export function renameUser(ds: Dataset, user: SimUser, lastName: string): void {
  ds.version++;
  user.last_name = lastName;
  user.ref['last_name'] = lastName;
  for (const members of ds.members.values())
    for (const m of members) if (m['id'] === user.id) m['last_name'] = lastName;
}
