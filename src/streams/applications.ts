import { isJsonObject, type JsonValue } from '../util/json.ts';
import { arr, cleanText, optId, untyped } from '../normalize/coerce.ts';
import { arrOf, I, NAMED, NUMBER, obj, OBJECT, S, STRING, USER } from '../normalize/field-kinds.ts';
import type { MappedRow } from '../normalize/mapping.ts';
import { QuarantineError } from '../normalize/quarantine.ts';
import { namedRef, userRef, type Id } from '../normalize/refs.ts';
import { col, enumCol, freeText, id, money, ref, req, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

const appChildren = ['application_stages', 'application_tasks', 'task_responses', 'application_notes'] as const;

/**
 * The application's current status, which the service sends and spec 2.3 omits: a StatusRef {id, name}, a bare id,
 * or a name. A value that is none of these is NULL and counted (kept in `_raw`); it never quarantines the record,
 * as a field the spec does not promise cannot make an application unloadable.
 */
function currentStatus(out: MappedRow[], v: JsonValue | undefined): { id: Id | null; name: string | null } {
  if (v === undefined || v === null) return { id: null, name: null };
  if (typeof v === 'string' && !/^\s*-?\d+\s*$/.test(v)) return { id: null, name: v === '' ? null : cleanText(v) };
  const o = isJsonObject(v) ? v : null;
  try {
    const id = namedRef(out, 'statuses', v, 'status');
    return { id, name: o !== null && typeof o.name === 'string' ? cleanText(o.name) : null };
  } catch (e) {
    if (!(e instanceof QuarantineError)) throw e;
    untyped(v);
    return { id: null, name: o !== null && typeof o.name === 'string' ? cleanText(o.name) : null };
  }
}

/** Each collaborator is itself a UserRef (or a bare id); a null one names no one and is skipped. */
function applicationCollaborators(out: MappedRow[], applicationId: Id, v: JsonValue | undefined): void {
  for (const c of arr(v)) {
    const userId = userRef(out, c, 'collaborators[]');
    if (userId !== null) {
      out.push({
        table: 'application_collaborators',
        row: { application_id: applicationId, user_id: userId, _raw: JSON.stringify(c) },
        merge: 'replace',
      });
    }
  }
}

/**
 * `labels` (the application's current labels; sent by the service, not in spec 2.3): names as strings, or objects
 * with a name (and maybe an id). One application_labels row per distinct name; an entry without a name is counted.
 */
function applicationLabels(out: MappedRow[], applicationId: Id, v: JsonValue | undefined): void {
  const seen = new Set<string>();
  for (const entry of arr(v)) {
    const o = isJsonObject(entry) ? entry : null;
    const name = typeof entry === 'string' ? entry : o !== null && typeof o.name === 'string' ? o.name : null;
    if (name === null) {
      untyped(entry);
      continue;
    }
    const label = cleanText(name);
    if (seen.has(label)) continue;
    seen.add(label);
    let labelId: Id | null = null;
    if (o !== null) {
      try {
        labelId = optId(o.id, 'labels[].id');
      } catch (e) {
        if (!(e instanceof QuarantineError)) throw e;
        untyped(o.id);
      }
    }
    out.push({
      table: 'application_labels',
      row: { application_id: applicationId, label, label_id: labelId, _raw: JSON.stringify(entry) },
      merge: 'replace',
    });
  }
}

export const applications = defineStream({
  name: 'applications',
  path: '/api/applications/',
  description: 'Applications (spec 4.2.1); parent of stages, tasks and notes.',
  customFields: 'application',
  cascades: appChildren.map((table) => ({
    table,
    column: 'application_id',
    parentTable: 'applications',
    parentColumn: 'id',
  })),
  table: {
    name: 'applications',
    kind: 'entity',
    description: 'Applications to programs (GET /api/applications/).',
    primaryKey: ['id'],
    columns: [
      id('Application system id.'),
      col('title', 'text', 'Application title, as the applicant typed it.', freeText),
      col('reference_id', 'text', 'Human-facing application id (site prefix + number).'),
      enumCol('state', 'application_state', 'Application state (enum application_state: 0 Active ... 4 Trashed).'),
      ref('applicant_id', 'users', 'Applicant (user).'),
      ref('program_id', 'programs', 'Program applied to.'),
      ref('current_stage_id', 'stages', 'Stage the application is currently in.'),
      ref('organization_id', 'organizations', 'Applying organization; NULL when the application has none.'),
      ref(
        'current_status_id',
        'statuses',
        'Current status (the `status` the service sends, not in spec 2.3); NULL when absent or sent as a name only.',
        { read: 'computed' },
      ),
      col('current_status', 'text', 'Name of the current status as sent (StatusRef name or a bare name).', {
        read: 'computed',
      }),
      ref('decision_award_id', 'awards', 'Award holding the administrator decision (DecisionRef id).', {
        source: 'decision.id',
        read: 'id',
      }),
      enumCol(
        'decision',
        'award_decision',
        'Administrator decision (enum award_decision: 0 Awarded, 1 Declined).',
        'integer',
        { source: 'decision.decision' },
      ),
      col(
        'awarded_as_sent',
        'text',
        'Awarded value as the API sends it, text such as $27,986.17 (decision.awarded); the amount is awarded_amount.',
        { source: 'decision.awarded' },
      ),
      money('awarded_amount', 'Awarded value parsed as money; NULL when the text is not an unambiguous amount', {
        source: 'decision.awarded',
      }),
      col('average_score', 'double', 'Average review score.'),
      col('overall_score', 'double', 'Overall review score.'),
      col('weighted_score', 'double', 'Weighted review score.'),
      tsCol('created_at', 'When the application was created', { read: 'strictTs' }),
      tsCol('updated_at', 'When the application was last updated', { read: 'strictTs' }),
      tsCol('last_submitted_at', 'Most recent submission'),
    ],
  },
  bridges: [
    {
      name: 'application_collaborators',
      kind: 'bridge',
      description: 'Collaborators of each application (applications[].collaborators).',
      primaryKey: ['application_id', 'user_id'],
      from: 'collaborators',
      byHand: true,
      columns: [
        ref('application_id', 'applications', 'Application.', { notNull: true, read: 'owner' }),
        ref('user_id', 'users', 'Collaborating user.', { notNull: true }),
      ],
    },
    {
      name: 'application_labels',
      kind: 'bridge',
      description:
        'Current labels of each application (applications[].labels, which the service sends and spec 2.3 omits).',
      primaryKey: ['application_id', 'label'],
      from: 'labels',
      byHand: true,
      // Not in the spec: a site that never sends labels says nothing of them (rows kept, not counted as silent).
      optional: true,
      columns: [
        ref('application_id', 'applications', 'Application.', { notNull: true, read: 'owner' }),
        req('label', 'text', 'Label name as sent.'),
        col('label_id', 'bigint', 'Label id, when the label came as an object with an id.'),
      ],
    },
  ],
  reads: {
    collaborators: arrOf(USER),
    // Not in spec 2.3, sent by the service: names, or {id, name}; the current status as a StatusRef, id or name.
    labels: arrOf(obj({ id: I, name: S }, { kinds: STRING | OBJECT })),
    status: { ...NAMED, kinds: OBJECT | NUMBER | STRING },
  },
  finish(record, row, out) {
    const status = currentStatus(out, record.status);
    row.current_status_id = status.id;
    row.current_status = status.name;
    const applicationId = row.id as Id;
    applicationCollaborators(out, applicationId, record.collaborators);
    applicationLabels(out, applicationId, record.labels);
  },
});
