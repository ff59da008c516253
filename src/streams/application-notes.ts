import { applicationParent } from './stream-def.ts';
import { QuarantineError } from '../normalize/quarantine.ts';
import { syntheticId } from '../normalize/refs.ts';
import { col, enumCol, freeText, id, ref, req, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const applicationNotes = defineStream({
  name: 'application_notes',
  path: '/api/applications/{parent}/notes/',
  description: 'Notes on each application (spec 4.2.15).',
  parent: applicationParent,
  table: {
    name: 'application_notes',
    kind: 'entity',
    description:
      'Notes on applications (GET /api/applications/{id}/notes/). A note without an id gets a synthetic negative id (see id_synthetic).',
    primaryKey: ['id'],
    columns: [
      id('Note id; when the API sends none, a stable negative id derived from (application, author, created_at).', {
        read: 'id',
      }),
      req('id_synthetic', 'boolean', 'True when id was derived because the API sent no id.', { read: 'computed' }),
      ref('application_id', 'applications', 'Application the note is on.', { notNull: true, read: 'parent' }),
      ref('author_id', 'users', 'Author of the note.'),
      enumCol('author_role', 'actor_role', 'Role of the author (admin, reviewer).', 'text'),
      col('content', 'text', 'Text of the note.', freeText),
      col('edited', 'boolean', 'Whether the note was edited.'),
      col('is_private', 'boolean', 'True when only administrators can see the note.'),
      tsCol('created_at', 'When the note was written', { read: 'strictTs' }),
      tsCol('updated_at', 'When the note was last updated', { read: 'strictTs' }),
    ],
  },
  // A note the API sends without an id is keyed by what identifies it: its application, author and time.
  finish(_record, row) {
    row.id_synthetic = row.id === null;
    if (row.id !== null) return;
    if (row.author_id === null && row.created_at === null)
      throw new QuarantineError('note has neither id nor author and created_at to derive a key from');
    row.id = syntheticId(['note', row.application_id ?? null, row.author_id ?? null, row.created_at ?? null]);
  },
});
