import type { JsonValue } from '../util/json.ts';
import { cleanText, untyped } from '../normalize/coerce.ts';
import type { Id } from '../normalize/refs.ts';
import type { Row, TableDef } from '../normalize/table-def.ts';
import { col, freeText, ref, req } from './columns.ts';

/** One row per answered question of a task's `data` object, written by application_tasks' `finish`. */
export const taskResponses: TableDef = {
  name: 'task_responses',
  kind: 'bridge',
  description:
    'One row per question answered in a task (application_tasks.data), bare or wrapped as {label, response}; typed columns are set only where the shape of the answer is unambiguous.',
  primaryKey: ['application_id', 'task_id', 'question_id'],
  columns: [
    ref('application_id', 'applications', 'Application.', { notNull: true }),
    ref('task_id', 'tasks', 'Task.', { notNull: true }),
    req('question_id', 'text', 'Question id (a string key of the task data).'),
    col(
      'question_label',
      'text',
      'Label of the question, when the answer came wrapped as {label, response} (the shape the service sends); NULL for a bare answer or a wrapped one without a label.',
    ),
    req(
      'response_json',
      'json',
      'The answer exactly as sent, whatever its shape: the bare value, or the response of a {label, response} entry (the whole entry is in _raw).',
      freeText,
    ),
    col(
      'text_value',
      'text',
      'The response when it is a JSON string, as sent: a text question, or a number question answered as text ("12", "1,250.50"). The API does not publish question types, so such text is not read as a number.',
      freeText,
    ),
    col(
      'number_value',
      'double',
      'The response when it is a JSON number (number question; an integer may also be a single-choice option id); NULL for a number sent as text, which stays in text_value.',
    ),
    col(
      'option_id',
      'bigint',
      'Chosen option id when the response is a single integer below 2^53, or {value: integer, other}.',
    ),
    col(
      'option_ids',
      'json',
      'Chosen option ids (JSON array text) when the response is an array of integers below 2^53, or {value: [..], other}.',
    ),
    col(
      'other_text',
      'text',
      "Text of the 'other' choice of {value, other} or {other} alone (JSON array text when it is an array).",
      freeText,
    ),
  ],
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
