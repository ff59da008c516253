import { contentMarker } from './stream-def.ts';
import { arr, obj, optId, text, untyped } from '../normalize/coerce.ts';
import { ANY, arrOf, I, obj as fieldsOf, S } from '../normalize/field-kinds.ts';
import { col, freeText, ref, req, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

/** The organization the object was read under, in both tables. */
const organization = ref('organization_id', 'organizations', 'Organization.', { notNull: true, read: 'parent' });

/**
 * One object per organization. Response question ids may repeat across tasks, so each response is keyed by
 * (question_id, occurrence of that id within the object).
 */
export const eligibility = defineStream({
  name: 'eligibility',
  path: '/api/organizations/{parent}/eligibility/',
  description: 'Eligibility of each organization (spec 4.10.1); 404 when not enabled or not started.',
  keyOf: () => 'eligibility',
  parent: { stream: 'organizations', marker: contentMarker },
  shape: 'object',
  skipOn: { 403: 'needs an organization administrator or `Assume role`' },
  notFoundMeansEmpty: true,
  table: {
    name: 'eligibility',
    kind: 'entity',
    description:
      'Eligibility of each organization (GET /api/organizations/{id}/eligibility/, one object per organization).',
    primaryKey: ['organization_id'],
    columns: [
      organization,
      col('is_completed', 'boolean', 'Eligibility questionnaire completed.'),
      tsCol('created_at', 'When eligibility started', { read: 'strictTs' }),
      tsCol('updated_at', 'When eligibility was last updated', { read: 'strictTs' }),
    ],
  },
  bridges: [
    {
      name: 'eligibility_responses',
      kind: 'bridge',
      from: 'responses',
      byHand: true,
      description:
        'Responses of eligibility questionnaires. Question ids may repeat across tasks, so the key adds the occurrence number of the id within the object.',
      primaryKey: ['organization_id', 'question_id', 'occurrence'],
      columns: [
        organization,
        req('question_id', 'text', 'Question identifier (unique within a task, may repeat across tasks).'),
        req(
          'occurrence',
          'integer',
          '0 for the first response with this question id in the object, 1 for the second, ...',
        ),
        col('position', 'integer', 'Index of the response in the responses array.'),
        col('name', 'text', 'Question text.'),
        col('response', 'text', 'Response text.', freeText),
      ],
    },
  ],
  reads: { responses: arrOf(fieldsOf({ id: I, name: S, response: ANY })) },
  finish(r, row, out) {
    const seen = new Map<string, number>();
    arr(r.responses).forEach((x, position) => {
      const resp = obj(x);
      if (resp === null) return;
      // Ids are strings in the spec; integers are accepted as their text.
      const qid = typeof resp.id === 'number' ? String(optId(resp.id, 'responses[].id')) : text(resp.id);
      if (qid === null) return untyped(resp); // no key: kept in eligibility._raw, counted
      const occurrence = seen.get(qid) ?? 0;
      seen.set(qid, occurrence + 1);
      out.push({
        table: 'eligibility_responses',
        row: {
          organization_id: row.organization_id ?? null,
          question_id: qid,
          occurrence,
          position,
          name: text(resp.name),
          response: text(resp.response),
          _raw: JSON.stringify(resp),
        },
        merge: 'replace',
      });
    });
  },
});
