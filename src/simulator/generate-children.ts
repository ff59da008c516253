import type { JsonObject, JsonValue } from '../util/json.ts';
import type { AppChildren, AppMeta, Dataset } from './dataset.ts';
import { DAY_MS, timestamp } from './format.ts';
import { deriveSeed, Rng } from './random.ts';
import { awkwardStrings } from './vocab.ts';

/** ~100 KB: one note this long exists (on the lowest application id) to test wide text columns. */
const LONG_NOTE = ('Very long note. ' + 'Lorem ipsum dolor sit amet — ünïcödé ✓ 🚀. ').repeat(1700);

/**
 * Generates an application's stage records, tasks and notes from (seed, application id) alone, so the
 * result does not depend on which applications were read first.
 */
export function generateChildren(ds: Dataset, appId: number, meta: AppMeta): AppChildren {
  const rng = new Rng(deriveSeed(ds.seed, appId, 7));
  const stages: JsonObject[] = [];
  const tasks: JsonObject[] = [];
  const notes: JsonObject[] = [];
  const programStages = ds.stagesByProgram.get(meta.programId) ?? [];
  let t = meta.createdMs;
  for (const def of programStages.slice(0, meta.stageIndex + 1)) {
    const current = def.order === meta.stageIndex;
    const created = t;
    t += rng.int(1, 20) * DAY_MS;
    const status = rng.pick(ds.statuses);
    const assigned = rng.int(0, 4);
    const submitted = rng.int(0, assigned);
    stages.push({
      id: def.id,
      state: current ? rng.pick([0, 1, 2]) : 0,
      status: { id: status['id'] ?? 0, name: status['name'] ?? '' },
      stage: { title: def.title, id: def.id },
      created_at: timestamp(rng, created),
      date_submitted: timestamp(rng, created + DAY_MS),
      date_reopened: rng.chance(0.1) ? timestamp(rng, created + 2 * DAY_MS) : null,
      task_completion: rng.pick([0, 25, 50, 75, 100]),
      reviews_assigned: assigned,
      reviews_submitted: submitted,
      reviews_completed: rng.int(0, submitted),
    });
    for (const task of ds.taskDefsByStage.get(def.id) ?? []) {
      const status = current ? rng.int(1, 3) : 3;
      const tc = created + rng.int(0, 3) * 3_600_000;
      const tu = tc + rng.int(1, 48) * 3_600_000;
      tasks.push({
        id: task.id,
        status,
        type: task.type,
        name: task.name,
        created_at: timestamp(rng, tc),
        updated_at: timestamp(rng, tu),
        completed_at: status === 3 ? timestamp(rng, tu) : null,
        stage: { title: def.title, id: def.id },
        data: status === 1 ? {} : taskData(rng, task.id),
      });
    }
  }
  const noteCount = isFirstApp(ds, appId) ? 3 : rng.int(0, 2);
  for (let k = 0; k < noteCount; k++) {
    const author = rng.chance(0.5) ? rng.pick(ds.admins) : rng.pick(ds.reviewers);
    const created = meta.createdMs + rng.int(1, 60) * DAY_MS;
    const edited = rng.chance(0.2);
    const content =
      k === 0 && isFirstApp(ds, appId)
        ? LONG_NOTE
        : rng.chance(0.15)
          ? rng.pick(awkwardStrings)
          : `Reviewed section ${k + 1}; score ${rng.int(1, 10)}/10.`;
    notes.push({
      id: appId * 4 + k,
      author: author.ref,
      author_role: author.role === 'admin' ? 'admin' : 'reviewer',
      content,
      edited,
      created_at: timestamp(rng, created),
      updated_at: timestamp(rng, edited ? created + DAY_MS : created),
      is_private: rng.chance(0.3),
    });
  }
  return { stages, tasks, notes };
}

function isFirstApp(ds: Dataset, appId: number): boolean {
  const first = ds.applications.rows[0];
  return first !== undefined && first['id'] === appId;
}

/** Task `data` per spec 2.5: text/number answers, option-id arrays, a single option id, {value, other}. */
export function taskData(rng: Rng, taskId: number): JsonObject {
  const base = taskId * 100;
  const data: Record<string, JsonValue> = {};
  data[`${base + 1}`] = rng.chance(0.1) ? rng.pick(awkwardStrings) : `Answer ${rng.int(1, 999)}`;
  data[`${base + 2}`] = rng.chance(0.5) ? rng.int(0, 10_000) : rng.int(0, 1000) / 10;
  data[`${base + 3}`] = rng.sample([1, 2, 3, 4, 5], rng.int(0, 3)).map((o) => base * 10 + o);
  data[`${base + 4}`] = base * 10 + rng.int(1, 4);
  if (rng.chance(0.5)) data[`${base + 5}`] = { value: base * 10 + 9, other: 'Something else — “quoted”' };
  else data[`${base + 5}`] = { value: [base * 10 + 1, base * 10 + 9], other: ['Other A', "Other B's"] };
  return data;
}
