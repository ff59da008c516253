import type { JsonObject } from '../util/json.ts';
import type { Dataset } from './dataset.ts';
import { DAY_MS, EPOCH_MS, timestamp } from './format.ts';
import type { Rng } from './random.ts';

export function assignmentRecord(
  ds: Dataset,
  app: JsonObject,
  stageId: number,
  key: 'reviewer' | 'team',
  who: JsonObject,
  updatedAt: string,
): JsonObject {
  const def = ds.stageDefs.get(stageId);
  return {
    application: { title: app['title'] ?? '', id: app['id'] ?? 0 },
    program: app['program'] ?? null,
    stage: { title: def?.title ?? '', id: stageId },
    [key]: who,
    updated_at: updatedAt,
  };
}

/** Reviewer assignments (0-3 per application, current stage) and team assignments (~10%). */
export function generateAssignments(ds: Dataset, rng: Rng): void {
  const allTeams = [...ds.teams.values()].flat();
  for (const app of ds.applications.rows) {
    const stageId = (app['current_stage'] as JsonObject)['id'] as number;
    const meta = ds.appMeta.get(app['id'] as number);
    const at = (): string => timestamp(rng, (meta?.createdMs ?? EPOCH_MS) + rng.int(1, 40) * DAY_MS);
    for (const reviewer of rng.sample(ds.reviewers, rng.int(0, 3))) {
      ds.assignments.push(assignmentRecord(ds, app, stageId, 'reviewer', reviewer.ref, at()));
    }
    if (allTeams.length > 0 && rng.chance(0.1)) {
      const team = rng.pick(allTeams);
      ds.teamAssignments.push(
        assignmentRecord(ds, app, stageId, 'team', { name: team['name'] ?? '', id: team['id'] ?? 0 }, at()),
      );
    }
  }
}

const ACTIVITY_TYPES = [
  'application_submitted',
  'status_changed',
  'note_added',
  'task_completed',
  'review_submitted',
  'award_created',
];

export function generateActivity(ds: Dataset, rng: Rng, count: number): void {
  const apps = ds.applications.rows;
  for (let id = 1; id <= count; id++) {
    const app = rng.pick(apps);
    const meta = ds.appMeta.get(app['id'] as number);
    const actor = rng.chance(0.5) ? rng.pick(ds.admins) : rng.pick(ds.reviewers);
    const stage = app['current_stage'] as JsonObject;
    const task = ds.taskDefsByStage.get(stage['id'] as number)?.[0];
    ds.activity.insert({
      id,
      actor: actor.ref,
      actor_role: actor.role === 'admin' ? 'admin' : 'reviewer',
      created_at: timestamp(rng, (meta?.createdMs ?? EPOCH_MS) + rng.int(0, 60) * DAY_MS),
      category: rng.chance(0.5),
      type: rng.pick(ACTIVITY_TYPES),
      application: { title: app['title'] ?? '', id: app['id'] ?? 0 },
      program: app['program'] ?? null,
      stage,
      task: task ? { name: task.name, id: task.id } : null,
      organization: app['organization'] ?? null,
    });
  }
}

export function generateLog(ds: Dataset, rng: Rng, count: number): void {
  const apps = ds.applications.rows;
  for (let id = 1; id <= count; id++) {
    const app = rng.pick(apps);
    const method = rng.pick(['GET', 'GET', 'GET', 'POST', 'PATCH', 'DELETE', 'PUT']);
    ds.log.insert({
      id,
      actor: rng.pick(ds.admins).ref,
      elapsed: rng.int(5, 2000) / 10,
      info: rng.chance(0.5) ? {} : { per_page: 100, page: rng.int(1, 50), filters: { program: rng.int(1, 5) } },
      method,
      object_id: app['id'] ?? 0,
      parent_id: (app['program'] as JsonObject)['id'] ?? 0,
      role: 'admin',
      status_code: rng.pick([200, 200, 200, 201, 204, 400, 401, 403, 404, 405]),
      timestamp: timestamp(rng, EPOCH_MS + rng.int(0, 300) * DAY_MS),
      url: `/api/applications/${String(app['id'])}/`,
    });
  }
}

export function generateReports(ds: Dataset, rng: Rng, count: number): void {
  for (let id = 1; id <= count; id++) {
    const program = rng.pick(ds.programs.rows);
    const source = rng.int(0, 3);
    const status = rng.pick([0, 1, 2, 3, 3, 3, 4, 5]);
    const total = rng.int(0, 5000);
    const generated = status === 3;
    ds.reports.insert({
      id,
      created_at: timestamp(rng, EPOCH_MS + rng.int(0, 300) * DAY_MS),
      created_by: rng.pick(ds.admins).ref,
      columns: ['application.id', 'application.title', 'program.name', 'applicant.email'],
      download_link: generated ? `https://grants.example.org/reports/${id}/download/` : '',
      last_error_message: status === 4 ? 'Timeout while "generating" — retry' : '',
      last_generated_at: generated ? timestamp(rng, EPOCH_MS + 301 * DAY_MS) : '',
      job_id: status === 1 || status === 2 ? `job-${id}` : '',
      name: `Report ${id}: ${source === 3 ? 'Users' : String(program['name'])}`,
      report_filename: `report_${id}.csv`,
      file_size: generated ? rng.int(1000, 9_000_000) : 0,
      program: source === 3 ? null : { id: program['id'] ?? 0, name: program['name'] ?? '' },
      source,
      status,
      row: generated ? total : rng.int(0, total),
      total_rows: total,
      filter: { type: 'AND', items: [{ predicate: 'equals', value: '0', variable: '59' }] },
    });
  }
}
