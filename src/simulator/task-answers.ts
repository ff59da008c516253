import type { JsonObject, JsonValue } from '../util/json.ts';

/**
 * How task answers are served. `wrapped` is what the real service sends, and what clients written against it read:
 * `data` maps each question id to `{label, response}`. `bare` is the shape spec 2.5 lists: the response alone.
 */
export type AnswerShape = 'wrapped' | 'bare';
export const answerShapes: readonly AnswerShape[] = ['wrapped', 'bare'];

/** Labels of the generated questions, by the question's number within its task (taskData's `base + n`). */
const LABELS: Readonly<Record<number, string>> = {
  1: 'Project summary',
  2: 'Amount requested (USD)',
  3: 'Focus areas',
  4: 'Region',
  5: 'How did you hear about us?',
};

/**
 * The label of a question, or null when it has none: the service leaves a question without a label now and then
 * (here the region question of every third task), and a question grantflow never generated (an edit's key) has none.
 * Some labels carry the awkward text real forms have (quotes, a tab, a newline, SQL).
 */
export function questionLabel(taskId: number, questionId: string): string | null {
  const q = Number(questionId) - taskId * 100;
  const label = LABELS[q];
  if (label === undefined) return null;
  if (q === 4 && taskId % 3 === 0) return null;
  if (q === 1 && taskId % 4 === 0) return `Summary: "what" & 'why'\t— ünïcödé 🚀\n'; DROP TABLE task_responses; --`;
  return label;
}

/** The task as served in `shape`: the dataset keeps answers bare, `wrapped` serves each as {label, response}. */
export function servedTask(task: JsonObject, shape: AnswerShape): JsonObject {
  const data = task['data'];
  if (shape === 'bare' || typeof data !== 'object' || data === null || Array.isArray(data)) return task;
  const taskId = task['id'] as number;
  const wrapped: Record<string, JsonValue> = {};
  for (const [questionId, response] of Object.entries(data)) {
    const label = questionLabel(taskId, questionId);
    wrapped[questionId] = label === null ? { response } : { label, response };
  }
  return { ...task, data: wrapped };
}
