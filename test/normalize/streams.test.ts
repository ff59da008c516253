import { describe, expect, it } from 'vitest';

import { QuarantineError, quarantineRow, recordKey, type NormalizeContext } from '../../src/normalize/index.ts';
import type { JsonObject } from '../../src/util/json.ts';

import { checkRows, rowsOf } from '../support/check-rows.ts';
import { streamMappings, mappingOf, type StreamName } from '../../src/streams/registry.ts';

const ctx: NormalizeContext = { siteTimeZone: 'UTC' };
const map = (stream: StreamName, r: JsonObject, c: NormalizeContext = ctx) => {
  const rows = mappingOf(stream).map(r, c);
  checkRows(rows);
  return rows;
};
const user = (id: number): JsonObject => ({ id, first_name: `F${id}`, last_name: `L${id}`, email: `u${id}@x.org` });

describe('activity', () => {
  const item: JsonObject = {
    actor: user(1),
    actor_role: 'reviewer',
    created_at: '2024-05-01T10:00:00+00:00',
    category: true,
    type: 'note_added',
    application: { id: 101, title: 'T' },
    program: { id: 2, name: 'Arts' },
    stage: { id: 3, title: 'S' },
    task: { id: 11, name: 'Form' },
    organization: { id: 5, name: 'Org' },
  };
  it('uses the id when present and a stable synthetic id otherwise', () => {
    const withId = rowsOf(map('activity', { ...item, id: 42 }), 'activity')[0]!;
    expect(withId).toMatchObject({
      id: 42,
      id_synthetic: false,
      actor_id: 1,
      application_id: 101,
      program_id: 2,
      stage_id: 3,
      task_id: 11,
      organization_id: 5,
      category: true,
    });
    const a = rowsOf(map('activity', item), 'activity')[0]!;
    const renamed = rowsOf(map('activity', { ...item, application: { id: 101, title: 'renamed' } }), 'activity')[0]!;
    expect(a.id_synthetic).toBe(true);
    expect(a.id).toBe(renamed.id);
    expect(rowsOf(map('activity', { ...item, created_at: '2024-05-01T10:00:01Z' }), 'activity')[0]!.id).not.toBe(a.id);
    const rows = map('activity', item);
    expect(rows.filter((r) => r.table === 'tasks')[0]).toEqual({
      table: 'tasks',
      row: { id: 11, name: 'Form', _raw: '{"id":11,"name":"Form"}' },
      merge: 'coalesce',
    });
    expect(rows.some((r) => r.table === 'applications')).toBe(false);
  });
});

describe('assignments', () => {
  it('keys by (application, reviewer, stage) and upserts the references', () => {
    const rows = map('assignments', {
      application: { id: 101, title: 'T' },
      program: { id: 2, name: 'Arts' },
      stage: { id: 3, title: 'S' },
      reviewer: user(4),
    });
    expect(rowsOf(rows, 'assignments')[0]).toMatchObject({
      application_id: 101,
      reviewer_id: 4,
      stage_id: 3,
      program_id: 2,
    });
    expect(rowsOf(rows, 'users')[0]).toMatchObject({ id: 4, first_name: 'F4' });
    expect(() => streamMappings.assignments.map({ application: { id: 1 }, stage: { id: 3 } }, ctx)).toThrow(
      /reviewer.id is missing/,
    );
  });
  it('team assignments upsert teams', () => {
    const rows = map('team_assignments', {
      application: { id: 101 },
      program: { id: 2 },
      stage: { id: 3 },
      team: { id: 6, name: 'Blue' },
    });
    expect(rowsOf(rows, 'team_assignments')[0]).toMatchObject({ application_id: 101, team_id: 6, stage_id: 3 });
    expect(rows.find((r) => r.table === 'teams')).toMatchObject({ row: { id: 6, name: 'Blue' }, merge: 'coalesce' });
  });
});

describe('custom fields, programs, reports', () => {
  it('custom field definitions', () => {
    const row = rowsOf(
      map('custom_fields', {
        id: 55,
        admin_only: false,
        choices: ['a', 'b'],
        default: 'a',
        name: 'Budget',
        readonly: false,
        required: true,
        show_in_registration: false,
        target: 'application',
        type: 1,
      }),
      'custom_fields',
    )[0];
    expect(row).toMatchObject({
      id: 55,
      choices: '["a","b"]',
      default_value: 'a',
      target: 'application',
      type: 1,
      required: true,
    });
  });
  it('programs with funding sources and custom fields', () => {
    const rows = map('programs', {
      id: 2,
      name: 'Arts',
      active: true,
      launched: 'true',
      applicant_type: 2,
      value_type: 2,
      value: 1000,
      max_value: '5000.50',
      score_format: 0,
      open_datetime: '2024-01-01T00:00:00Z',
      close_datetime: null,
      collaborator_domains: ['x.org'],
      total: 10000.1,
      allocated: 0,
      paid: 0.3,
      balance: '$9,999.80',
      funding_sources: [{ id: 70, balance: 500, fund: { id: 8, name: 'General' } }],
      custom_fields: [{ id: 57, name: 'Theme', value: 'Sea' }],
    });
    expect(rowsOf(rows, 'programs')[0]).toMatchObject({
      id: 2,
      launched: true,
      value: '1000.00',
      max_value: '5000.50',
      total: '10000.10',
      paid: '0.30',
      balance: '9999.80',
      collaborator_domains: '["x.org"]',
    });
    expect(rowsOf(rows, 'program_funding_sources')[0]).toMatchObject({
      program_id: 2,
      budget_id: 70,
      fund_id: 8,
      balance: '500.00',
    });
    expect(rowsOf(rows, 'funds')[0]).toMatchObject({ id: 8, name: 'General' });
    expect(rowsOf(rows, 'custom_field_values')[0]).toMatchObject({
      entity_type: 'program',
      entity_id: 2,
      field_id: 57,
    });
  });
  it('reports: blank last_generated_at is NULL, row -> current_row', () => {
    const row = rowsOf(
      map('reports', {
        id: 3,
        name: 'R',
        created_at: '2024-01-01T00:00:00Z',
        created_by: user(1),
        columns: ['application.id'],
        last_generated_at: '',
        job_id: '',
        program: { id: 2, name: 'Arts' },
        source: 0,
        status: 3,
        row: 10,
        total_rows: 10,
        file_size: 5_000_000_000, // BIGINT: past 32 bits is fine
        filter: { type: 'AND', items: [] },
      }),
      'reports',
    )[0];
    expect(row).toMatchObject({
      id: 3,
      last_generated_at: null,
      current_row: 10,
      file_size: 5_000_000_000,
      created_by_id: 1,
      program_id: 2,
      filter: '{"type":"AND","items":[]}',
    });
  });
});

describe('finance', () => {
  it('funds', () => {
    const rows = map('funds', {
      id: 8,
      name: 'General',
      site_fund_id: 1,
      created_by: user(1),
      created_at: '2024-01-01T00:00:00Z',
      fund_folder: { id: 2, name: 'F' },
      custom_fields: [],
      balance: 100.5,
      total: 200,
      allocated: 50,
      paid: 49.5,
      available_to_programs: 0,
      utilization: 49.75,
    });
    expect(rowsOf(rows, 'funds')[0]).toMatchObject({
      id: 8,
      fund_folder_id: 2,
      balance: '100.50',
      paid: '49.50',
      // Sent in percent, stored as a fraction.
      utilization_rate: 0.4975,
      created_by_id: 1,
    });
  });
  it('budgets', () => {
    const rows = map('budgets', {
      id: 70,
      paid: 1,
      allocated: 2,
      balance: 3,
      budget: 6,
      fund: { id: 8, name: 'General' },
      program: { id: 2, name: 'Arts' },
      created_at: '2024-01-01T00:00:00Z',
    });
    expect(rowsOf(rows, 'budgets')[0]).toMatchObject({ id: 70, fund_id: 8, program_id: 2, budget: '6.00' });
  });
  it('transactions: polymorphic source/destination, embedded payment, unknown type 4', () => {
    const rows = map('financial_transactions', {
      id: 1,
      transaction_id: 1001,
      transaction_date: '2024-02-01',
      created_at: '2024-02-01T00:00:00Z',
      updated_at: '2024-02-01T00:00:00Z',
      created_by: user(1),
      updated_by: user(2),
      notes: 'move',
      transaction_type: 2,
      source_type: 2,
      destination_type: 1,
      amount: 1500.25,
      new_source_balance: 8500,
      new_destination_balance: '1,500.25',
      source: { id: 8, name: 'General' },
      destination: { id: 2, name: 'Arts', active: true },
      payment: { id: 300, amount: 10, status: { id: 9, name: 'Paid' } },
    });
    expect(rowsOf(rows, 'financial_transactions')[0]).toMatchObject({
      id: 1,
      transaction_id: 1001,
      transaction_type: 2,
      source_type: 2,
      source_fund_id: 8,
      source_program_id: null,
      destination_type: 1,
      destination_program_id: 2,
      amount: '1500.25',
      new_source_balance: '8500.00',
      new_destination_balance: '1500.25',
      transaction_date: '2024-02-01T00:00:00Z',
      payment_id: 300,
      destination_json: '{"id":2,"name":"Arts","active":true}',
    });
    expect(rows.find((r) => r.table === 'payments')).toMatchObject({
      merge: 'coalesce',
      row: { id: 300, amount: '10.00', status_id: 9 },
    });
    expect(rows.find((r) => r.table === 'funds')).toMatchObject({ merge: 'coalesce', row: { id: 8 } });
    const deposit = rowsOf(
      map('financial_transactions', {
        id: 2,
        transaction_type: 4,
        source_type: 0,
        source: null,
        destination_type: 3,
        destination: { id: 101, title: 'T' },
        amount: '12',
      }),
      'financial_transactions',
    )[0];
    expect(deposit).toMatchObject({
      transaction_type: 4,
      source_json: null,
      destination_application_id: 101,
      amount: '12.00',
    });
  });
  it('awards: awarded text plus parsed amount, payments bridge', () => {
    const rows = map('awards', {
      id: 900,
      program: { id: 2, name: 'Arts' },
      application: { id: 101, title: 'T' },
      applicant: user(7),
      awarded: '$1,250.00',
      awarded_at: '2024-04-01T00:00:00-07:00',
      created_at: '2024-04-01T00:00:00Z',
      updated_at: '2024-04-01T00:00:00Z',
      decision: 0,
      value: 1250,
      applicant_decision: 2,
      visible: true,
      custom_fields: [{ id: 58, name: 'Grant code', value: 'G-1' }],
      payments: [{ id: 300, amount: 625, status: { id: 9, name: 'Paid' } }],
    });
    expect(rowsOf(rows, 'awards')[0]).toMatchObject({
      id: 900,
      application_id: 101,
      awarded_as_sent: '$1,250.00',
      awarded_amount: '1250.00',
      value: '1250.00',
      awarded_at: '2024-04-01T07:00:00Z',
      applicant_decision: 2,
    });
    expect(rowsOf(rows, 'award_payments')[0]).toMatchObject({
      award_id: 900,
      payment_id: 300,
      amount: '625.00',
      status_id: 9,
    });
    expect(rowsOf(rows, 'custom_field_values')[0]).toMatchObject({ entity_type: 'award', entity_id: 900 });
  });
  it('payments with sources and decision', () => {
    const rows = map('payments', {
      id: 300,
      amount: 625,
      created_by: user(1),
      created_at: '2024-04-02T00:00:00Z',
      custom_fields: [],
      decision: { id: 900, decision: 0, awarded: '1250' },
      effective_date: '2024-04-03',
      note: 'n',
      note_applicant_visible: false,
      status: { id: 9, name: 'Paid' },
      sources: [{ id: 1, transaction_id: 1001, transaction_date: '2024-04-02T00:00:00Z', amount: 625 }],
    });
    expect(rowsOf(rows, 'payments')[0]).toMatchObject({
      id: 300,
      decision_award_id: 900,
      awarded_amount: '1250.00',
      effective_date: '2024-04-03T00:00:00Z',
      status_id: 9,
    });
    expect(rowsOf(rows, 'payment_sources')[0]).toMatchObject({
      payment_id: 300,
      source_id: 1,
      transaction_id: 1001,
      amount: '625.00',
    });
    expect(() => streamMappings.payments.map({ id: 1, sources: [{ amount: 1 }] }, ctx)).toThrow(QuarantineError);
  });
});

describe('organizations', () => {
  it('full organization and OrgRef-only shape', () => {
    const rows = map('organizations', {
      id: 5,
      name: 'Org',
      status: 1,
      primary_admin: user(1),
      tax_country: 1,
      tax_number: '123456789 RT 0001',
      custom_fields: [{ id: 59, name: 'Size', value: 'S' }],
    });
    expect(rowsOf(rows, 'organizations')[0]).toMatchObject({ id: 5, primary_admin_id: 1, tax_country: 1, status: 1 });
    expect(rowsOf(map('organizations', { id: 6, name: 'Limited' }), 'organizations')[0]).toMatchObject({
      id: 6,
      name: 'Limited',
      status: null,
    });
  });
  const octx: NormalizeContext = { siteTimeZone: 'UTC', parentId: 5 };
  it('members go to organization_members and users', () => {
    const rows = map('organization_members', { ...user(4), is_admin: true, status: 1 }, octx);
    expect(rowsOf(rows, 'organization_members')[0]).toMatchObject({
      organization_id: 5,
      user_id: 4,
      is_admin: true,
      status: 1,
    });
    expect(rows.find((r) => r.table === 'users')).toMatchObject({
      merge: 'coalesce',
      row: { id: 4, email: 'u4@x.org' },
    });
  });
  it('teams carry their organization', () => {
    expect(map('organization_teams', { id: 6, name: 'Blue' }, octx)).toEqual([
      {
        table: 'teams',
        row: { id: 6, name: 'Blue', organization_id: 5, _raw: '{"id":6,"name":"Blue"}' },
        merge: 'replace',
      },
    ]);
  });
  it('eligibility: one object, responses keyed by repeated question ids', () => {
    const rows = map(
      'eligibility',
      {
        created_at: '2024-01-01T00:00:00Z',
        updated_at: '2024-01-02T00:00:00Z',
        is_completed: true,
        responses: [
          { id: 'q1', name: 'Q?', response: 'yes' },
          { id: 'q1', name: 'Q again?', response: 'no' },
          { id: 'q2', name: 'Z', response: '' },
        ],
      },
      octx,
    );
    expect(rowsOf(rows, 'eligibility')[0]).toMatchObject({ organization_id: 5, is_completed: true });
    expect(rowsOf(rows, 'eligibility_responses').map((r) => [r.question_id, r.occurrence, r.position])).toEqual([
      ['q1', 0, 0],
      ['q1', 1, 1],
      ['q2', 0, 2],
    ]);
  });
});

describe('api log', () => {
  it('maps entries; timestamp -> logged_at', () => {
    const row = rowsOf(
      map('api_log', {
        id: 1,
        actor: user(1),
        elapsed: 12.5,
        info: { a: 1 },
        method: 'GET',
        object_id: 101,
        parent_id: null,
        role: 'admin',
        status_code: 200,
        timestamp: '2024-01-01T00:00:00.000001Z',
        url: '/api/applications/',
      }),
      'api_log',
    )[0];
    expect(row).toMatchObject({
      id: 1,
      logged_at: '2024-01-01T00:00:00.000001Z',
      object_id: 101,
      parent_id: null,
      info: '{"a":1}',
    });
  });
});

describe('quarantine rows', () => {
  it('stable key whatever the key order', () => {
    expect(recordKey({ a: 1, b: [1, { c: 2, d: 3 }] })).toBe(recordKey({ b: [1, { d: 3, c: 2 }], a: 1 }));
    const row = quarantineRow(
      'applications',
      { id: 'x' },
      'id is not an integer id',
      'run-1',
      new Date('2024-01-01T00:00:00Z'),
    );
    expect(row).toEqual({
      stream: 'applications',
      record_key: recordKey({ id: 'x' }),
      reason: 'id is not an integer id',
      payload: '{"id":"x"}',
      run_id: 'run-1',
      quarantined_at: '2024-01-01T00:00:00.000Z',
    });
    checkRows([{ table: '_grantflow_quarantine', row: { ...row, _raw: '{}' }, merge: 'replace' }]);
  });
});
