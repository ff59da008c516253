import { applicationParent } from './stream-def.ts';
import { obj } from '../normalize/coerce.ts';
import type { Id } from '../normalize/refs.ts';
import type { Row } from '../normalize/table-def.ts';
import { col, enumCol, freeText, ref, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';
import { responseRow, taskResponses } from './task-responses.ts';

export const applicationTasks = defineStream({
  name: 'application_tasks',
  path: '/api/applications/{parent}/tasks/',
  description: 'Tasks of each application with their responses (spec 4.2.9).',
  parent: applicationParent,
  table: {
    name: 'application_tasks',
    kind: 'entity',
    description: 'Tasks of each application (GET /api/applications/{id}/tasks/); responses are in task_responses.',
    primaryKey: ['application_id', 'task_id'],
    columns: [
      ref('application_id', 'applications', 'Application.', { notNull: true, read: 'parent' }),
      ref('task_id', 'tasks', 'Task.', { notNull: true, source: 'id', read: 'key' }),
      col('name', 'text', 'Task name.'),
      enumCol('status', 'task_status', 'Task status (enum task_status: 1 Not started, 2 In progress, 3 Completed).'),
      enumCol('type', 'task_type', 'Task type (enum task_type).'),
      ref('stage_id', 'stages', 'Stage the task belongs to.'),
      tsCol('created_at', 'When the task was created', { read: 'strictTs' }),
      tsCol('updated_at', 'When the task was last updated', { read: 'strictTs' }),
      tsCol('completed_at', 'When the task was completed'),
      col('data', 'json', 'The task responses object as sent (question id -> response).', freeText),
    ],
  },
  otherTables: [taskResponses],
  alsoOwns: [{ table: 'task_responses', parentColumn: 'application_id', from: { key: 'data', shape: 'object' } }],
  finish(record, row, out) {
    const applicationId = row.application_id as Id;
    const taskId = row.task_id as Id;
    // The task itself is a dimension (`tasks`), filled from every application's copy of it.
    const task: Row = {
      id: taskId,
      _raw: JSON.stringify({
        id: record.id,
        name: record.name ?? null,
        type: record.type ?? null,
        stage: record.stage ?? null,
      }),
    };
    for (const column of ['name', 'type', 'stage_id']) {
      const v = row[column];
      if (v !== null && v !== undefined) task[column] = v;
    }
    out.push({ table: 'tasks', row: task, merge: 'coalesce' });
    const data = obj(record.data);
    if (data !== null)
      for (const qid of Object.keys(data))
        out.push({
          table: 'task_responses',
          row: responseRow(applicationId, taskId, qid, data[qid]!),
          merge: 'replace',
        });
  },
});
