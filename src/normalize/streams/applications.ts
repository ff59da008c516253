import type { JsonObject, JsonValue } from '../../util/json.ts';
import { arr, bool, cleanText, dbl, int, money, obj, optId, reqId, reqTs, text, ts, untyped } from '../coerce.ts';
import type { MappedRow, NormalizeContext, StreamMapping } from '../mapping.ts';
import { QuarantineError } from '../quarantine.ts';
import {
  customFieldValues,
  customFieldValuesScope,
  namedRef,
  parentId,
  syntheticId,
  userRef,
  type Id,
} from '../refs.ts';
import type { Row } from '../table-def.ts';

export function must(id: Id | null, field: string): Id {
  if (id === null) throw new QuarantineError(`${field} is missing: the record has no usable key`);
  return id;
}

const appChildren = ['application_stages', 'application_tasks', 'task_responses', 'application_notes'] as const;

export const applicationsStream: StreamMapping = {
  owns: [
    { table: 'applications', idColumn: 'id' },
    { table: 'application_collaborators', idColumn: 'application_id', from: { key: 'collaborators', shape: 'array' } },
    customFieldValuesScope('application'),
    // Not in the spec: a site that never sends labels says nothing of them (rows kept, not counted as silent).
    {
      table: 'application_labels',
      idColumn: 'application_id',
      from: { key: 'labels', shape: 'array', optional: true },
    },
  ],
  cascades: appChildren.map((table) => ({
    table,
    column: 'application_id',
    parentTable: 'applications',
    parentColumn: 'id',
  })),
  map(r: JsonObject, ctx: NormalizeContext): MappedRow[] {
    const out: MappedRow[] = [];
    const z = ctx.siteTimeZone;
    const id = reqId(r.id, 'id');
    const decision = obj(r.decision);
    const status = currentStatus(out, r.status);
    const row: Row = {
      id,
      title: text(r.title),
      reference_id: text(r.reference_id),
      state: int(r.state),
      applicant_id: userRef(out, r.applicant, 'applicant'),
      program_id: namedRef(out, 'programs', r.program, 'program'),
      current_stage_id: namedRef(out, 'stages', r.current_stage, 'current_stage', 'title'),
      organization_id: namedRef(out, 'organizations', r.organization, 'organization'),
      current_status_id: status.id,
      current_status: status.name,
      decision_award_id: decision === null ? null : optId(decision.id, 'decision.id'),
      decision: decision === null ? null : int(decision.decision),
      awarded: decision === null ? null : text(decision.awarded),
      awarded_amount: decision === null ? null : money(decision.awarded),
      average_score: dbl(r.average_score),
      overall_score: dbl(r.overall_score),
      weighted_score: dbl(r.weighted_score),
      created_at: reqTs(r.created_at, z, 'created_at'),
      updated_at: reqTs(r.updated_at, z, 'updated_at'),
      last_submitted_at: ts(r.last_submitted_at, z),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'applications', row, merge: 'replace' });
    for (const c of arr(r.collaborators)) {
      const userId = userRef(out, c, 'collaborators[]');
      if (userId !== null) {
        out.push({
          table: 'application_collaborators',
          row: { application_id: id, user_id: userId, _raw: JSON.stringify(c) },
          merge: 'replace',
        });
      }
    }
    customFieldValues(out, 'application', id, r.custom_fields);
    applicationLabels(out, id, r.labels);
    return out;
  },
};

const isPlainObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The application's current status, which the service sends and spec 2.3 omits: a StatusRef {id, name}, a bare id,
 * or a name. A value that is none of these is NULL and counted (kept in `_raw`); it never quarantines the record,
 * as a field the spec does not promise cannot make an application unloadable.
 */
function currentStatus(out: MappedRow[], v: JsonValue | undefined): { id: Id | null; name: string | null } {
  if (v === undefined || v === null) return { id: null, name: null };
  if (typeof v === 'string' && !/^\s*-?\d+\s*$/.test(v)) return { id: null, name: v === '' ? null : cleanText(v) };
  const o = isPlainObject(v) ? v : null;
  try {
    const id = namedRef(out, 'statuses', v, 'status');
    return { id, name: o !== null && typeof o.name === 'string' ? cleanText(o.name) : null };
  } catch (e) {
    if (!(e instanceof QuarantineError)) throw e;
    untyped(v);
    return { id: null, name: o !== null && typeof o.name === 'string' ? cleanText(o.name) : null };
  }
}

/**
 * `labels` (the application's current labels; sent by the service, not in spec 2.3): names as strings, or objects
 * with a name (and maybe an id). One application_labels row per distinct name; an entry without a name is counted.
 */
function applicationLabels(out: MappedRow[], applicationId: Id, v: JsonValue | undefined): void {
  const seen = new Set<string>();
  for (const entry of arr(v)) {
    const o = isPlainObject(entry) ? entry : null;
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

export const applicationStagesStream: StreamMapping = {
  owns: [{ table: 'application_stages', parentColumn: 'application_id' }],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const z = ctx.siteTimeZone;
    const row: Row = {
      application_id: parentId(ctx, 'application_stages'),
      stage_id: must(namedRef(out, 'stages', r.stage, 'stage', 'title'), 'stage.id'),
      state: int(r.state),
      status_id: namedRef(out, 'statuses', r.status, 'status'),
      created_at: reqTs(r.created_at, z, 'created_at'),
      date_submitted: ts(r.date_submitted, z),
      date_reopened: ts(r.date_reopened, z),
      task_completion: int(r.task_completion),
      reviews_assigned: int(r.reviews_assigned),
      reviews_submitted: int(r.reviews_submitted),
      reviews_completed: int(r.reviews_completed),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'application_stages', row, merge: 'replace' });
    return out;
  },
};

export const applicationTasksStream: StreamMapping = {
  owns: [
    { table: 'application_tasks', parentColumn: 'application_id' },
    { table: 'task_responses', parentColumn: 'application_id', from: { key: 'data', shape: 'object' } },
  ],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const z = ctx.siteTimeZone;
    const applicationId = parentId(ctx, 'application_tasks');
    const taskId = reqId(r.id, 'id');
    const stageId = namedRef(out, 'stages', r.stage, 'stage', 'title');
    const name = text(r.name);
    const type = int(r.type);
    const data = obj(r.data);
    const row: Row = {
      application_id: applicationId,
      task_id: taskId,
      name,
      status: int(r.status),
      type,
      stage_id: stageId,
      created_at: reqTs(r.created_at, z, 'created_at'),
      updated_at: reqTs(r.updated_at, z, 'updated_at'),
      completed_at: ts(r.completed_at, z),
      data: r.data === undefined || r.data === null ? null : JSON.stringify(r.data),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'application_tasks', row, merge: 'replace' });
    const def: Row = {
      id: taskId,
      _raw: JSON.stringify({ id: r.id, name: r.name ?? null, type: r.type ?? null, stage: r.stage ?? null }),
    };
    if (name !== null) def.name = name;
    if (type !== null) def.type = type;
    if (stageId !== null) def.stage_id = stageId;
    out.push({ table: 'tasks', row: def, merge: 'coalesce' });
    if (data !== null) {
      for (const qid of Object.keys(data))
        out.push({
          table: 'task_responses',
          row: responseRow(applicationId, taskId, qid, data[qid]!),
          merge: 'replace',
        });
    }
    return out;
  },
};

/**
 * An option id: an integer JSON number below 2^53. Beyond it JSON.parse has already rounded the digits (and past
 * 2^63 the BIGINT column would reject the value and fail the whole stream's load), so it is not an option id;
 * the response stays in response_json (and a plain number in number_value).
 */
const isOptionId = (x: JsonValue | undefined): x is number => typeof x === 'number' && Number.isSafeInteger(x);
const isIntArray = (v: JsonValue[]): boolean => v.every(isOptionId);

/**
 * The answer of one `data` entry and its question's label. The real service wraps each answer as
 * {label, response}; spec 2.5 lists the bare answer. An object with a `response` key and neither `value` nor
 * `other` (those make it a bare {value, other} answer) is the wrapped shape; anything else is a bare answer.
 */
export function unwrapResponse(v: JsonValue): { answer: JsonValue; label: string | null; wrapped: boolean } {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || !('response' in v) || 'value' in v || 'other' in v)
    return { answer: v, label: null, wrapped: false };
  const label = v.label;
  if (label !== undefined && label !== null && typeof label !== 'string') untyped(label); // kept in _raw
  return { answer: v.response ?? null, label: typeof label === 'string' ? cleanText(label) : null, wrapped: true };
}

/**
 * One task response, bare or wrapped ({label, response}, see unwrapResponse), typed where the shape of the answer is
 * unambiguous (spec 2.5): string -> text_value; number -> number_value (an integer also fills option_id: it may be a
 * single-choice answer); array of integers -> option_ids; {value, other} (either may be absent) -> option_id/option_ids
 * + other_text. Anything else keeps only response_json. A string of digits stays text: the API publishes no question
 * types, and a text question (a postal code, a phone number) may hold digits as surely as a number question sent as
 * text, so reading it as a number would be a guess.
 */
export function responseRow(applicationId: Id, taskId: Id, questionId: string, entry: JsonValue): Row {
  const { answer: v, label } = unwrapResponse(entry);
  const responseJson = JSON.stringify(v);
  const row: Row = {
    application_id: applicationId,
    task_id: taskId,
    question_id: cleanText(questionId),
    question_label: label,
    response_json: responseJson,
    text_value: null,
    number_value: null,
    option_id: null,
    option_ids: null,
    other_text: null,
    _raw: JSON.stringify(entry),
  };
  if (typeof v === 'string') row.text_value = cleanText(v);
  else if (typeof v === 'number') {
    row.number_value = v;
    if (isOptionId(v)) row.option_id = v;
  } else if (Array.isArray(v)) {
    if (isIntArray(v)) row.option_ids = responseJson;
  } else if (
    v !== null &&
    typeof v === 'object' &&
    ('value' in v || 'other' in v) &&
    Object.keys(v).every((k) => k === 'value' || k === 'other')
  ) {
    const value = v.value;
    if (isOptionId(value)) row.option_id = value;
    else if (Array.isArray(value) && isIntArray(value)) row.option_ids = JSON.stringify(value);
    const other = v.other;
    if (typeof other === 'string') row.other_text = cleanText(other);
    else if (Array.isArray(other) && other.every((x) => typeof x === 'string'))
      row.other_text = cleanText(JSON.stringify(other));
  }
  return row;
}

export const applicationNotesStream: StreamMapping = {
  owns: [{ table: 'application_notes', parentColumn: 'application_id' }],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const z = ctx.siteTimeZone;
    const applicationId = parentId(ctx, 'application_notes');
    const authorId = userRef(out, r.author, 'author');
    const createdAt = reqTs(r.created_at, z, 'created_at');
    let id = optId(r.id, 'id');
    const synthetic = id === null;
    if (id === null) {
      if (authorId === null && createdAt === null)
        throw new QuarantineError('note has neither id nor author and created_at to derive a key from');
      id = syntheticId(['note', applicationId, authorId, createdAt]);
    }
    const row: Row = {
      id,
      id_synthetic: synthetic,
      application_id: applicationId,
      author_id: authorId,
      author_role: text(r.author_role),
      content: text(r.content),
      edited: bool(r.edited),
      is_private: bool(r.is_private),
      created_at: createdAt,
      updated_at: reqTs(r.updated_at, z, 'updated_at'),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'application_notes', row, merge: 'replace' });
    return out;
  },
};
