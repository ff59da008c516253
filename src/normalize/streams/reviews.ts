import { attrId, bool, dbl, int, json, optId, reqId, reqTs, text } from '../coerce.ts';
import type { MappedRow, StreamMapping } from '../mapping.ts';
import { QuarantineError } from '../quarantine.ts';
import { namedRef, refId, syntheticId, userRef } from '../refs.ts';
import type { Row } from '../table-def.ts';
import { must } from './applications.ts';

export const assignmentsStream: StreamMapping = {
  owns: [{ table: 'assignments' }],
  cascades: [],
  map(r) {
    const out: MappedRow[] = [];
    const row: Row = {
      application_id: must(refId(r.application, 'application'), 'application.id'),
      reviewer_id: must(userRef(out, r.reviewer, 'reviewer'), 'reviewer.id'),
      stage_id: must(namedRef(out, 'stages', r.stage, 'stage', 'title'), 'stage.id'),
      program_id: namedRef(out, 'programs', r.program, 'program'),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'assignments', row, merge: 'replace' });
    return out;
  },
};

export const teamAssignmentsStream: StreamMapping = {
  owns: [{ table: 'team_assignments' }],
  cascades: [],
  map(r) {
    const out: MappedRow[] = [];
    const row: Row = {
      application_id: must(refId(r.application, 'application'), 'application.id'),
      team_id: must(namedRef(out, 'teams', r.team, 'team'), 'team.id'),
      stage_id: must(namedRef(out, 'stages', r.stage, 'stage', 'title'), 'stage.id'),
      program_id: namedRef(out, 'programs', r.program, 'program'),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'team_assignments', row, merge: 'replace' });
    return out;
  },
};

/**
 * Activity items may come without an id: the synthetic id hashes what identifies the event (actor, time,
 * type, category, role and the ids of what it concerns), not names that can change later.
 */
export const activityStream: StreamMapping = {
  owns: [{ table: 'activity', idColumn: 'id' }],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const actorId = userRef(out, r.actor, 'actor');
    const actorRole = text(r.actor_role);
    const type = text(r.type);
    const category = bool(r.category);
    const createdAt = reqTs(r.created_at, ctx.siteTimeZone, 'created_at');
    const applicationId = refId(r.application, 'application');
    const programId = namedRef(out, 'programs', r.program, 'program');
    const stageId = namedRef(out, 'stages', r.stage, 'stage', 'title');
    const taskId = namedRef(out, 'tasks', r.task, 'task');
    const organizationId = namedRef(out, 'organizations', r.organization, 'organization');
    let id = optId(r.id, 'id');
    const synthetic = id === null;
    if (id === null) {
      if (createdAt === null && actorId === null)
        throw new QuarantineError('activity item has no id, actor or created_at to derive a key from');
      id = syntheticId([
        'activity',
        actorId,
        createdAt,
        type,
        category,
        actorRole,
        applicationId,
        programId,
        stageId,
        taskId,
        organizationId,
      ]);
    }
    const row: Row = {
      id,
      id_synthetic: synthetic,
      actor_id: actorId,
      actor_role: actorRole,
      type,
      category,
      created_at: createdAt,
      application_id: applicationId,
      program_id: programId,
      stage_id: stageId,
      task_id: taskId,
      organization_id: organizationId,
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'activity', row, merge: 'replace' });
    return out;
  },
};

export const apiLogStream: StreamMapping = {
  owns: [{ table: 'api_log', idColumn: 'id' }],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const row: Row = {
      id: reqId(r.id, 'id'),
      logged_at: reqTs(r.timestamp, ctx.siteTimeZone, 'timestamp'),
      actor_id: userRef(out, r.actor, 'actor'),
      role: text(r.role),
      method: text(r.method),
      url: text(r.url),
      status_code: int(r.status_code),
      elapsed: dbl(r.elapsed),
      object_id: attrId(r.object_id, 'object_id'),
      parent_id: attrId(r.parent_id, 'parent_id'),
      info: json(r.info),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'api_log', row, merge: 'replace' });
    return out;
  },
};
