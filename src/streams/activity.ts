import { QuarantineError } from '../normalize/quarantine.ts';
import { syntheticId } from '../normalize/refs.ts';
import type { Row } from '../normalize/table-def.ts';
import type { JsonObject } from '../util/json.ts';
import { col, enumCol, id, ref, req, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

/**
 * Activity items may come without an id: the synthetic id hashes what identifies the event (actor, time,
 * type, category, role and the ids of what it concerns), not names that can change later. The order is part of the
 * hash: changing it changes every synthetic id already loaded.
 */
const identifyingColumns = [
  'actor_id',
  'created_at',
  'type',
  'category',
  'actor_role',
  'application_id',
  'program_id',
  'stage_id',
  'task_id',
  'organization_id',
] as const;

function withSyntheticId(_record: JsonObject, row: Row): void {
  const synthetic = row.id === null;
  row.id_synthetic = synthetic;
  if (!synthetic) return;
  if (row.created_at === null && row.actor_id === null)
    throw new QuarantineError('activity item has no id, actor or created_at to derive a key from');
  row.id = syntheticId(['activity', ...identifyingColumns.map((c) => row[c] ?? null)]);
}

export const activity = defineStream({
  name: 'activity',
  path: '/api/activity/',
  description: 'Activity items visible to the caller (spec 4.1), newest first.',
  mode: 'append_newest_first',
  table: {
    name: 'activity',
    kind: 'entity',
    description:
      'Activity items (GET /api/activity/). Items without an id get a stable synthetic negative id derived from their actor, time, type and references (see id_synthetic).',
    primaryKey: ['id'],
    columns: [
      id(
        'Activity id; when the API sends none, -(1 + first 52 bits of sha256 of actor/created_at/type/category/role/reference ids).',
        { read: 'id' },
      ),
      req('id_synthetic', 'boolean', 'True when id was derived because the API sent no id.', { read: 'computed' }),
      ref('actor_id', 'users', 'User who acted.'),
      enumCol('actor_role', 'actor_role', 'Role the actor acted in (admin, reviewer).', 'text'),
      col('type', 'text', 'Kind of activity.'),
      col('category', 'boolean', 'Category flag (a boolean in the API).'),
      tsCol('created_at', 'When it happened', { read: 'strictTs' }),
      ref('application_id', 'applications', 'Application concerned.'),
      ref('program_id', 'programs', 'Program concerned.'),
      ref('stage_id', 'stages', 'Stage concerned.'),
      ref('task_id', 'tasks', 'Task concerned.'),
      ref('organization_id', 'organizations', 'Organization concerned.'),
    ],
  },
  // The id column is read leniently (synthetic when absent), so the key is named here.
  owns: [{ table: 'activity', idColumn: 'id' }],
  finish: withSyntheticId,
});
