import type { JsonObject } from '../util/json.ts';
import type { Dataset } from './dataset.ts';
import { nowStamp } from './format.ts';
import { addApplications } from './generate.ts';
import { deleteApplication, recordWrite, renameUser } from './mutations.ts';
import { Rng } from './random.ts';
import { addNote } from './write-routes.ts';

export interface ChangeRequest {
  /** New applications (with lazily generated stage records, tasks and notes). */
  readonly created?: number;
  /** Existing applications edited: `overall_score` changes and `updated_at` moves. */
  readonly updated?: number;
  /** Applications deleted, with their children and assignments. */
  readonly deleted?: number;
  /** Applications whose task data or notes change WITHOUT their `updated_at` moving. */
  readonly childEdits?: number;
  /**
   * Applications whose applicant is renamed (a shorter last name, but for one-letter names, in every record naming
   * them) and which are edited
   * with it, so an incremental sync reads one record naming the user under the new name.
   */
  readonly renamed?: number;
}

export interface ChangeResult {
  readonly created: number[];
  readonly updated: number[];
  readonly deleted: number[];
  /** Application ids whose children were edited. */
  readonly childEdits: number[];
  /** Application ids whose applicant was renamed. */
  readonly renamed: number[];
}

/** The first letter of the old last name: a rename makes references to the user poorer (shorter) than before. */
function shorterName(old: string): string {
  const first = [...old][0] ?? 'N';
  return first === old ? `${old}o` : first;
}

/** Bulk changes between syncs. The affected sets are disjoint; picks are seeded (deterministic per call). */
export function applyChanges(ds: Dataset, request: ChangeRequest, callIndex: number): ChangeResult {
  const rng = new Rng(ds.seed * 7919 + callIndex * 104_729 + 17);
  const taken = new Set<number>();
  const pickApps = (n: number): JsonObject[] => {
    const rows = ds.applications.rows;
    const want = Math.min(n, rows.length - taken.size);
    const out: JsonObject[] = [];
    while (out.length < want) {
      const app = rng.pick(rows);
      const id = app['id'] as number;
      if (taken.has(id)) continue;
      taken.add(id);
      out.push(app);
    }
    return out.sort((a, b) => (a['id'] as number) - (b['id'] as number));
  };

  const deleted = pickApps(request.deleted ?? 0).map((app) => {
    const id = app['id'] as number;
    deleteApplication(ds, id);
    recordWrite(ds, 'application_deleted', 'DELETE', `/api/applications/${id}/`, { application: app }, id, 204);
    return id;
  });
  const updated = pickApps(request.updated ?? 0).map((app) => {
    app['overall_score'] = rng.int(0, 100);
    app['updated_at'] = nowStamp();
    recordWrite(
      ds,
      'application_updated',
      'PATCH',
      `/api/applications/${String(app['id'])}/`,
      { application: app },
      app['id'] as number,
      200,
    );
    return app['id'] as number;
  });
  const childEdits = pickApps(request.childEdits ?? 0).map((app) => {
    const id = app['id'] as number;
    const children = ds.children(id);
    const task = children?.tasks[0];
    if (task && rng.chance(0.7)) {
      task['data'] = { ...(task['data'] as JsonObject), edited: `edit ${callIndex}-${rng.int(1, 1e6)} ✎` };
      task['updated_at'] = nowStamp();
      recordWrite(
        ds,
        'task_updated',
        'PATCH',
        `/api/applications/${id}/tasks/${String(task['id'])}/`,
        { application: app, task: { name: task['name'] ?? '', id: task['id'] ?? 0 } },
        task['id'] as number,
        200,
      );
    } else {
      addNote(ds, id, `Follow-up note ${callIndex}: it's "fine" 👍`, false);
    }
    return id;
  });
  const renamed = pickApps(request.renamed ?? 0).map((app) => {
    const id = app['id'] as number;
    const user = ds.users.get((app['applicant'] as JsonObject)['id'] as number);
    if (user) renameUser(ds, user, shorterName(user.last_name));
    app['updated_at'] = nowStamp();
    recordWrite(ds, 'application_updated', 'PATCH', `/api/applications/${id}/`, { application: app }, id, 200);
    return id;
  });
  const before = ds.applications.maxId();
  if ((request.created ?? 0) > 0) addApplications(ds, rng, request.created ?? 0);
  const created: number[] = [];
  for (let id = before + 1; id <= ds.applications.maxId(); id++) {
    created.push(id);
    recordWrite(
      ds,
      'application_created',
      'POST',
      '/api/applications/',
      { application: ds.applications.get(id) ?? null },
      id,
      201,
    );
  }
  return { created, updated, deleted, childEdits, renamed };
}
