import { describe, expect, it } from 'vitest';

import { QuarantineError, untypedValues, type NormalizeContext } from '../../src/normalize/index.ts';
import type { JsonObject } from '../../src/util/json.ts';

import { checkRows, rowsOf } from '../support/check-rows.ts';
import { streamMappings, mappingOf } from '../../src/streams/registry.ts';

const ctx: NormalizeContext = { siteTimeZone: 'UTC' };
const map = (stream: keyof typeof streamMappings, r: JsonObject, c: NormalizeContext = ctx) => {
  const rows = mappingOf(stream).map(r, c);
  checkRows(rows);
  return rows;
};

const application: JsonObject = {
  id: 101,
  title: 'Robert\'); DROP TABLE applications;-- "quoted" 🚀 ünïcödé',
  reference_id: 'APP-101',
  state: 0,
  applicant: { id: 7, first_name: 'Ada', last_name: "O'Brien", email: 'ada@example.org' },
  collaborators: [
    { id: 8, first_name: 'Bo', last_name: 'Li', email: 'bo@example.org' },
    { id: 9, first_name: 'Cy', last_name: null, email: null },
  ],
  current_stage: { id: 3, title: 'Review' },
  custom_fields: [
    { id: 55, name: 'Budget', value: '1000' },
    { id: 56, name: 'Region', value: 'North\u0000' },
  ],
  decision: { id: 900, decision: 0, awarded: '$1,250.00' },
  organization: null,
  program: { id: 2, name: 'Arts' },
  average_score: 4.5,
  overall_score: 90,
  weighted_score: null,
  created_at: '2024-03-01T12:00:00.123456+02:00',
  updated_at: '2024-03-02T08:00:00',
  last_submitted_at: '',
  brand_new_field: { nested: true },
};

describe('applications', () => {
  it('maps the application, its references, collaborators and custom fields', () => {
    const rows = map('applications', application);
    expect(rows[0]).toMatchObject({ table: 'applications', merge: 'replace' });
    const [app] = rowsOf(rows, 'applications');
    expect(app).toMatchObject({
      id: 101,
      title: application.title,
      state: 0,
      applicant_id: 7,
      program_id: 2,
      current_stage_id: 3,
      organization_id: null,
      decision_award_id: 900,
      decision: 0,
      awarded_as_sent: '$1,250.00',
      awarded_amount: '1250.00',
      average_score: 4.5,
      overall_score: 90,
      weighted_score: null,
      created_at: '2024-03-01T10:00:00.123456Z',
      updated_at: '2024-03-02T08:00:00Z',
      last_submitted_at: null,
    });
    expect(JSON.parse(app!._raw as string)).toEqual(application); // unknown fields kept
    const users = rows.filter((r) => r.table === 'users');
    expect(users.map((u) => u.merge)).toEqual(['coalesce', 'coalesce', 'coalesce']);
    expect(users.map((u) => u.row)).toContainEqual({
      id: 7,
      first_name: 'Ada',
      last_name: "O'Brien",
      email: 'ada@example.org',
      _raw: JSON.stringify(application.applicant),
    });
    // a null in a reference never becomes a column value that would erase a richer row
    expect(users.find((u) => u.row.id === 9)?.row).not.toHaveProperty('last_name');
    expect(rowsOf(rows, 'programs')).toEqual([{ id: 2, name: 'Arts', _raw: '{"id":2,"name":"Arts"}' }]);
    expect(rowsOf(rows, 'stages')).toEqual([{ id: 3, title: 'Review', _raw: '{"id":3,"title":"Review"}' }]);
    expect(rowsOf(rows, 'organizations')).toEqual([]);
    expect(rowsOf(rows, 'application_collaborators').map((r) => r.user_id)).toEqual([8, 9]);
    expect(rowsOf(rows, 'custom_field_values')).toEqual([
      {
        entity_type: 'application',
        entity_id: 101,
        field_id: 55,
        name: 'Budget',
        value: '1000',
        _raw: '{"id":55,"name":"Budget","value":"1000"}',
      },
      {
        entity_type: 'application',
        entity_id: 101,
        field_id: 56,
        name: 'Region',
        value: 'North\uFFFD',
        _raw: JSON.stringify({ id: 56, name: 'Region', value: 'North\u0000' }),
      },
    ]);
    expect(rows.filter((r) => r.table === 'custom_fields').every((r) => r.merge === 'coalesce')).toBe(true);
  });

  it('maps the labels and current status the service sends (not in the spec), in any shape it may use', () => {
    const labelled: JsonObject = {
      ...application,
      labels: ['Priority', { id: 4, name: 'Tab\tand\nnewline "q"' }, 'Priority', { id: 5 }, 7],
      status: { id: 3, name: 'Approved' },
    };
    const base = untypedValues.count;
    map('applications', application);
    const before = untypedValues.count;
    const rows = map('applications', labelled);
    // The entry without a name and the number are counted (kept in _raw); the repeated name is one row.
    expect(untypedValues.count - before).toBe(before - base + 2);
    expect(rowsOf(rows, 'application_labels')).toEqual([
      { application_id: 101, label: 'Priority', label_id: null, _raw: '"Priority"' },
      {
        application_id: 101,
        label: 'Tab\tand\nnewline "q"',
        label_id: 4,
        _raw: JSON.stringify((labelled.labels as JsonObject[])[1]),
      },
    ]);
    expect(rowsOf(rows, 'applications')[0]).toMatchObject({ current_status_id: 3, current_status: 'Approved' });
    expect(rowsOf(rows, 'statuses')).toEqual([{ id: 3, name: 'Approved', _raw: '{"id":3,"name":"Approved"}' }]);
    const app = (status: JsonObject[string]) =>
      rowsOf(map('applications', { ...application, status }), 'applications')[0];
    expect(app('Needs Info')).toMatchObject({ current_status_id: null, current_status: 'Needs Info' });
    expect(app(6)).toMatchObject({ current_status_id: 6, current_status: null });
    // A status id that is no id does not quarantine the application: NULL, counted.
    const n = untypedValues.count;
    expect(app({ id: 'x', name: 'Odd' })).toMatchObject({ current_status_id: null, current_status: 'Odd' });
    expect(untypedValues.count - n).toBe(before - base + 1);
    expect(app(undefined as unknown as JsonObject[string])).toMatchObject({
      current_status_id: null,
      current_status: null,
    });
    expect(rowsOf(map('applications', application), 'application_labels')).toEqual([]);
  });

  it('reads naive timestamps in the site time zone', () => {
    const [app] = rowsOf(map('applications', application, { siteTimeZone: 'America/Chicago' }), 'applications');
    expect(app?.updated_at).toBe('2024-03-02T14:00:00Z');
  });

  it('accepts a minimal record, ids as text and write-shape integer references', () => {
    const rows = map('applications', { id: '102', program: 2, applicant: '7' });
    const [app] = rowsOf(rows, 'applications');
    expect(app).toMatchObject({
      id: 102,
      program_id: 2,
      applicant_id: 7,
      title: null,
      decision_award_id: null,
      awarded_amount: null,
    });
    expect(rowsOf(rows, 'programs')).toEqual([{ id: 2, _raw: '2' }]);
  });

  it('keeps odd values: unknown state, ambiguous money', () => {
    const [app] = rowsOf(
      map('applications', { id: 103, state: 9, decision: { id: 1, decision: 1, awarded: '1 250,00' } }),
      'applications',
    );
    expect(app).toMatchObject({ state: 9, decision: 1, awarded_as_sent: '1 250,00', awarded_amount: null });
  });

  it('reads ids beyond 2^53 given as text exactly, up to the BIGINT limit', () => {
    const [app] = rowsOf(map('applications', { id: '9223372036854775807' }), 'applications');
    expect(app?.id).toBe(9223372036854775807n);
  });

  it.each([
    [{ id: 105, state: 'open', decision: { id: 1, awarded: '1 250,00' }, last_submitted_at: 'soon' }, 3],
    [{ id: 106, state: null, decision: { id: 1, awarded: '  ' }, last_submitted_at: '' }, 0],
    [{ id: 107, state: 2, decision: { id: 1, awarded: '$1,250.00' }, last_submitted_at: '2024-01-01' }, 0],
    // shapes the mapping cannot use: an object where an array is expected and the reverse, an entry of no shape
    [{ id: 108, decision: 5, collaborators: { id: 3 }, custom_fields: ['x', { id: 1, value: 'ok' }] }, 3],
    [{ id: 109, decision: null, collaborators: [], custom_fields: [] }, 0],
    // an empty container of the other kind holds nothing (PHP encodes an empty map as [])
    [{ id: 110, decision: [], collaborators: {}, custom_fields: {} }, 0],
    // a reference without an id names something no row can hold; an empty one names nothing
    [{ id: 111, program: { name: 'Arts' }, applicant: { id: null, email: 'a@x' }, organization: {} }, 2],
    [{ id: 112, program: [], applicant: { id: null }, current_stage: '' }, 0],
  ])('counts the present values it could not type in %j: %i', (record, expected) => {
    const before = untypedValues.count;
    map('applications', record as JsonObject);
    expect(untypedValues.count - before).toBe(expected);
  });

  it('loads a record whose reference is an empty array (PHP encodes an empty map so) without that reference', () => {
    const [app] = rowsOf(map('applications', { id: 113, organization: [], program: { id: 2 } }), 'applications');
    expect(app).toMatchObject({ id: 113, organization_id: null, program_id: 2 });
  });

  it('nulls an integer field the INTEGER column cannot hold, instead of failing the load', () => {
    const [app] = rowsOf(map('applications', { id: 104, state: 3_000_000_000 }), 'applications');
    expect(app).toMatchObject({ id: 104, state: null });
    expect(JSON.parse(String(app?._raw))).toMatchObject({ state: 3_000_000_000 });
  });

  it.each([
    [{ title: 'no id' }, /id is missing/],
    [{ id: 'abc' }, /id is not an integer/],
    [{ id: 1.5 }, /id is not an integer/],
    [{ id: 1, updated_at: 'last tuesday' }, /updated_at is not a timestamp/],
    [{ id: 1, program: { id: 'x', name: 'bad' } }, /program.id is not an integer/],
    // JSON.parse rounds these: 2^53 + 1 would load as 2^53, another record's key
    [JSON.parse('{"id": 9007199254740993}'), /id is a JSON number beyond 2\^53/],
    [{ id: 1e20 }, /id is a JSON number beyond 2\^53/],
    [{ id: '9223372036854775808' }, /id does not fit a 64-bit integer id/],
    [JSON.parse('{"id": 1, "applicant": {"id": -9007199254740993}}'), /applicant.id is a JSON number beyond 2\^53/],
  ])('quarantines %j', (record, reason) => {
    expect(() => streamMappings.applications.map(record as JsonObject, ctx)).toThrow(QuarantineError);
    expect(() => streamMappings.applications.map(record as JsonObject, ctx)).toThrow(reason);
  });
});

describe('application stages, tasks, notes (per application)', () => {
  const pctx: NormalizeContext = { siteTimeZone: 'UTC', parentId: 101 };

  it('maps a stage record keyed by (application_id, stage_id)', () => {
    const rows = map(
      'application_stages',
      {
        state: 0,
        status: { id: 4, name: 'Under review' },
        stage: { id: 3, title: 'Review' },
        created_at: '2024-01-01T00:00:00Z',
        date_submitted: '2024-01-02T00:00:00Z',
        date_reopened: null,
        task_completion: 50,
        reviews_assigned: 2,
        reviews_submitted: 1,
        reviews_completed: '1',
      },
      pctx,
    );
    expect(rowsOf(rows, 'application_stages')[0]).toMatchObject({
      application_id: 101,
      stage_id: 3,
      state: 0,
      status_id: 4,
      // Sent in percent, stored as a fraction.
      task_completion_rate: 0.5,
      reviews_completed: 1,
      date_reopened: null,
    });
    expect(rowsOf(rows, 'statuses')).toEqual([{ id: 4, name: 'Under review', _raw: '{"id":4,"name":"Under review"}' }]);
    expect(() => streamMappings.application_stages.map({ state: 0 }, pctx)).toThrow(/stage.id is missing/);
  });

  it('maps a task and one typed response row per question, whatever the shape', () => {
    const data: JsonObject = {
      q_text: 'It\'s "fine"; DROP TABLE x; 😀',
      q_num: 12.5,
      q_int: 3,
      // Digits as text: a text question (a postal code, an id) or a number question sent as text; the API does not say.
      q_digits: '12',
      q_amount_text: '1,250.50',
      q_multi: [1, 2, 3],
      q_empty: [],
      q_other_single: { value: 4, other: 'Something else' },
      q_other_multi: { value: [5, 6], other: ['a', 'b'] },
      q_other_only: { other: 'Only the other choice' },
      q_wrapped: { answer: { value: 1 } },
      q_strings: ['x', 'y'],
      q_null: null,
      q_bool: true,
      q_nul: 'a\u0000b',
    };
    const rows = map(
      'application_tasks',
      {
        id: 11,
        status: 3,
        type: 1,
        name: 'Form',
        created_at: '2024-01-01T00:00:00Z',
        updated_at: '2024-01-01T01:00:00.5Z',
        completed_at: null,
        stage: { id: 3, title: 'Review' },
        data,
      },
      pctx,
    );
    expect(rowsOf(rows, 'application_tasks')[0]).toMatchObject({
      application_id: 101,
      task_id: 11,
      status: 3,
      type: 1,
      stage_id: 3,
      updated_at: '2024-01-01T01:00:00.5Z',
      data: JSON.stringify(data),
    });
    expect(rowsOf(rows, 'tasks')[0]).toMatchObject({ id: 11, name: 'Form', type: 1, stage_id: 3 });
    const byQ = new Map(rowsOf(rows, 'task_responses').map((r) => [r.question_id, r]));
    expect(byQ.size).toBe(Object.keys(data).length);
    const pick = (q: string) => {
      const r = byQ.get(q)!;
      return {
        text: r.text_value,
        num: r.number_value,
        opt: r.option_id,
        opts: r.option_ids,
        other: r.other_text,
        json: r.response_json,
      };
    };
    expect(pick('q_text')).toEqual({
      text: data.q_text,
      num: null,
      opt: null,
      opts: null,
      other: null,
      json: JSON.stringify(data.q_text),
    });
    expect(pick('q_num')).toMatchObject({ text: null, num: 12.5, opt: null });
    expect(pick('q_int')).toMatchObject({ num: 3, opt: 3 });
    expect(pick('q_digits')).toMatchObject({ text: '12', num: null, opt: null });
    expect(pick('q_amount_text')).toMatchObject({ text: '1,250.50', num: null });
    expect(pick('q_multi')).toMatchObject({ opts: '[1,2,3]', opt: null });
    expect(pick('q_empty')).toMatchObject({ opts: '[]' });
    expect(pick('q_other_single')).toMatchObject({ opt: 4, opts: null, other: 'Something else' });
    expect(pick('q_other_multi')).toMatchObject({ opt: null, opts: '[5,6]', other: '["a","b"]' });
    expect(pick('q_other_only')).toMatchObject({ opt: null, opts: null, other: 'Only the other choice' });
    for (const q of ['q_wrapped', 'q_strings', 'q_null', 'q_bool']) {
      expect(pick(q), q).toEqual({
        text: null,
        num: null,
        opt: null,
        opts: null,
        other: null,
        json: JSON.stringify(data[q]),
      });
    }
    expect(pick('q_nul').text).toBe('a\uFFFDb');
  });

  it('types a wrapped {label, response} answer as its bare response, and keeps the label', () => {
    // The same answers bare and wrapped (the shape the real service sends) must type alike.
    const bare: JsonObject = {
      q_text: 'It\'s "fine"; DROP TABLE x; 😀',
      q_num: 12.5,
      q_int: 3,
      q_digits: '12',
      q_multi: [1, 2, 3],
      q_other_single: { value: 4, other: 'Something else' },
      q_other_multi: { value: [5, 6], other: ['a', 'b'] },
      q_null: null,
      q_nested: { response: 'a bare object that only looks wrapped', value: 1 },
    };
    const labels: Record<string, string> = { q_text: 'Summary — “quoted”\tand\nnewline', q_num: 'Amount' };
    const wrapped: JsonObject = Object.fromEntries(
      Object.entries(bare).map(([q, v]) => [
        q,
        q in labels ? { label: labels[q]!, response: v } : ({ response: v } as JsonObject),
      ]),
    );
    const task = (data: JsonObject) =>
      rowsOf(
        map(
          'application_tasks',
          { id: 11, status: 3, type: 1, created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T00:00:00Z', data },
          pctx,
        ),
        'task_responses',
      );
    const typed = (r: Record<string, unknown>) => {
      const { question_label: _l, _raw: _r, ...rest } = r;
      return rest;
    };
    const bareRows = new Map(task(bare).map((r) => [r.question_id, r]));
    const wrappedRows = new Map(task(wrapped).map((r) => [r.question_id, r]));
    for (const q of Object.keys(bare)) {
      expect(typed(wrappedRows.get(q)!), q).toEqual(typed(bareRows.get(q)!));
      expect(wrappedRows.get(q)!.question_label, q).toBe(labels[q] ?? null);
      expect(wrappedRows.get(q)!._raw, q).toBe(JSON.stringify(wrapped[q]));
      expect(bareRows.get(q)!.question_label, q).toBeNull();
    }
    expect(wrappedRows.get('q_text')).toMatchObject({ text_value: bare.q_text, question_label: labels.q_text });
    expect(wrappedRows.get('q_other_multi')).toMatchObject({ option_ids: '[5,6]', other_text: '["a","b"]' });
    // {response, value} is a bare {value, other} answer with an unknown key: not unwrapped, bare or inside a wrapper.
    expect(bareRows.get('q_nested')!.response_json).toBe(JSON.stringify(bare.q_nested));
    expect(wrappedRows.get('q_nested')!.response_json).toBe(JSON.stringify(bare.q_nested));
    // A label that is not text is not guessed at: NULL, and counted as untyped (it stays in _raw).
    const before = untypedValues.count;
    expect(task({ q: { label: 7, response: 'x' } })[0]).toMatchObject({ question_label: null, text_value: 'x' });
    expect(untypedValues.count).toBe(before + 1);
  });

  it('maps notes, with a stable synthetic id when the API sends none', () => {
    const note: JsonObject = {
      author: { id: 7, first_name: 'Ada', last_name: 'L', email: 'a@x' },
      author_role: 'admin',
      content: 'ok',
      edited: false,
      is_private: true,
      created_at: '2024-01-01T00:00:00Z',
      updated_at: '2024-01-01T00:00:00Z',
    };
    const a = rowsOf(map('application_notes', note, pctx), 'application_notes')[0]!;
    const b = rowsOf(
      map('application_notes', { ...note, content: 'edited later', edited: true }, pctx),
      'application_notes',
    )[0]!;
    expect(a.id_synthetic).toBe(true);
    expect(a.id).toBeLessThan(0);
    expect(b.id).toBe(a.id);
    expect(rowsOf(map('application_notes', note, { ...pctx, parentId: 102 }), 'application_notes')[0]!.id).not.toBe(
      a.id,
    );
    const withId = rowsOf(map('application_notes', { ...note, id: 77 }, pctx), 'application_notes')[0]!;
    expect(withId).toMatchObject({
      id: 77,
      id_synthetic: false,
      application_id: 101,
      author_id: 7,
      author_role: 'admin',
      is_private: true,
    });
  });

  it('refuses to run a per-parent stream without a parent id', () => {
    expect(() => streamMappings.application_tasks.map({ id: 1 }, ctx)).toThrow(/parentId/);
  });
});
