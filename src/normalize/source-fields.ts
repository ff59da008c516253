import type { StreamName } from './mapping.ts';

/**
 * The source fields each stream's mapping reads (spec api.md, section 2), with the JSON kinds each may hold. The
 * record walk (record-walk.ts) compares records with it: a field outside it is drift (an unmapped path), a known
 * field of another kind is a retyped one. A unit test checks that every field the mappings read is listed here.
 */

/** JSON kinds as bits; null is always allowed. */
export const STRING = 1;
export const NUMBER = 2;
export const BOOLEAN = 4;
export const OBJECT = 8;
export const ARRAY = 16;
const ANY_KIND = STRING | NUMBER | BOOLEAN | OBJECT | ARRAY;

export interface FieldNode {
  /** JSON kinds the field may hold (a bit set of the constants above). */
  readonly kinds: number;
  /** Known members of an object value; absent: the value is kept whole (a JSON column), not looked into for drift. */
  readonly fields?: ReadonlyMap<string, FieldNode>;
  /** Known shape of array items; absent: items are kept whole. */
  readonly items?: FieldNode;
  /** The mapping reads this value as a reference and feeds its dimension itself: the walk does not again. */
  readonly ref?: boolean;
}

const leaf = (kinds: number): FieldNode => ({ kinds });
const S = leaf(STRING);
const N = leaf(NUMBER);
const B = leaf(BOOLEAN);
/** Ids and money may come as digit text as well as numbers (the coercers accept both). */
const I = leaf(NUMBER | STRING);
const M = leaf(NUMBER | STRING);
/** Kept whole (a JSON column or a value only `_raw` keeps): members are not drift, references in it still count. */
const ANY: FieldNode = { kinds: ANY_KIND };
// Maps, not objects: the walk looks every key of every record up, and a Map lookup costs half as much.
const obj = (fields: Record<string, FieldNode>, extra: Partial<FieldNode> = {}): FieldNode => ({
  kinds: OBJECT,
  fields: new Map(Object.entries(fields)),
  ...extra,
});
const arrOf = (items: FieldNode): FieldNode => ({ kinds: ARRAY, items });
/** A reference read by the mapping: an object, or a bare id (the write shape), or `[]` (PHP's empty map). */
const refTo = (fields: Record<string, FieldNode>): FieldNode => ({
  kinds: OBJECT | NUMBER | STRING | ARRAY,
  fields: new Map(Object.entries(fields)),
  ref: true,
});
const USER = refTo({ id: I, first_name: S, last_name: S, email: S });
const NAMED = refTo({ id: I, name: S });
const TITLED = refTo({ id: I, title: S });
/** ApplicationRef and DecisionRef: only the id is read, but their listed members are known. */
const APPLICATION = refTo({ id: I, title: S });
const DECISION = obj({ id: I, decision: N, awarded: M }, { kinds: OBJECT | ARRAY });
const CUSTOM_FIELDS = arrOf(obj({ id: I, name: S, value: ANY }));
const TS = S;

const payment = {
  id: I,
  amount: M,
  status: NAMED,
  decision: DECISION,
  effective_date: TS,
  note: S,
  note_applicant_visible: B,
  created_by: USER,
  created_at: TS,
  custom_fields: CUSTOM_FIELDS,
  sources: arrOf(obj({ id: I, transaction_id: I, transaction_date: TS, amount: M })),
};

export const sourceFields: Readonly<Record<StreamName, FieldNode | null>> = {
  activity: obj({
    id: I,
    actor: USER,
    actor_role: S,
    created_at: TS,
    category: B,
    type: S,
    application: APPLICATION,
    program: NAMED,
    stage: TITLED,
    task: NAMED,
    organization: NAMED,
  }),
  applications: obj({
    id: I,
    title: S,
    reference_id: S,
    state: N,
    applicant: USER,
    program: NAMED,
    current_stage: TITLED,
    organization: NAMED,
    decision: DECISION,
    average_score: M,
    overall_score: M,
    weighted_score: M,
    created_at: TS,
    updated_at: TS,
    last_submitted_at: TS,
    collaborators: arrOf(USER),
    custom_fields: CUSTOM_FIELDS,
    // Not in spec 2.3, sent by the service: names, or {id, name}; the current status as a StatusRef, id or name.
    labels: arrOf(obj({ id: I, name: S }, { kinds: STRING | OBJECT })),
    status: { ...NAMED, kinds: OBJECT | NUMBER | STRING },
  }),
  application_stages: obj({
    id: I,
    stage: TITLED,
    state: N,
    status: NAMED,
    created_at: TS,
    date_submitted: TS,
    date_reopened: TS,
    task_completion: N,
    reviews_assigned: N,
    reviews_submitted: N,
    reviews_completed: N,
  }),
  application_tasks: obj({
    id: I,
    stage: TITLED,
    name: S,
    type: N,
    status: N,
    created_at: TS,
    updated_at: TS,
    completed_at: TS,
    data: ANY,
  }),
  application_notes: obj({
    id: I,
    author: USER,
    author_role: S,
    content: S,
    edited: B,
    is_private: B,
    created_at: TS,
    updated_at: TS,
  }),
  // updated_at: not in the spec's list, but sent and read by the extraction (its incremental cursor).
  assignments: obj({ id: I, application: APPLICATION, reviewer: USER, stage: TITLED, program: NAMED, updated_at: TS }),
  team_assignments: obj({
    id: I,
    application: APPLICATION,
    team: NAMED,
    stage: TITLED,
    program: NAMED,
    updated_at: TS,
  }),
  custom_fields: obj({
    id: I,
    name: S,
    type: N,
    target: S,
    choices: ANY,
    default: ANY,
    admin_only: B,
    readonly: B,
    required: B,
    show_in_registration: B,
  }),
  financial_transactions: obj({
    id: I,
    transaction_id: I,
    transaction_type: N,
    amount: M,
    transaction_date: TS,
    source_type: N,
    source: { ...ANY, ref: true },
    new_source_balance: M,
    destination_type: N,
    destination: { ...ANY, ref: true },
    new_destination_balance: M,
    payment: obj(payment, { kinds: OBJECT | ARRAY }),
    notes: S,
    created_by: USER,
    updated_by: USER,
    created_at: TS,
    updated_at: TS,
  }),
  funds: obj({
    id: I,
    name: S,
    site_fund_id: I,
    created_by: USER,
    created_at: TS,
    fund_folder: obj({ id: I, name: S }, { kinds: OBJECT | ARRAY }),
    custom_fields: CUSTOM_FIELDS,
    balance: M,
    total: M,
    allocated: M,
    paid: M,
    available_to_programs: M,
    utilization: M,
  }),
  budgets: obj({
    id: I,
    fund: NAMED,
    program: NAMED,
    budget: M,
    allocated: M,
    paid: M,
    balance: M,
    created_at: TS,
  }),
  awards: obj({
    id: I,
    application: APPLICATION,
    program: NAMED,
    applicant: USER,
    decision: N,
    awarded: M,
    value: M,
    awarded_at: TS,
    visible: B,
    notification_message: S,
    applicant_decision_required: B,
    applicant_decision: N,
    applicant_decision_deadline: TS,
    applicant_decision_submitted_on: TS,
    applicant_note: S,
    created_at: TS,
    updated_at: TS,
    custom_fields: CUSTOM_FIELDS,
    payments: arrOf(obj({ id: I, amount: M, status: NAMED })),
  }),
  payments: obj(payment),
  api_log: obj({
    id: I,
    timestamp: TS,
    actor: USER,
    role: S,
    method: S,
    url: S,
    status_code: N,
    elapsed: M,
    object_id: I,
    parent_id: I,
    info: ANY,
  }),
  organizations: obj({
    id: I,
    name: S,
    status: N,
    primary_admin: USER,
    allow_collaborators: B,
    email: S,
    phone: S,
    website: S,
    address: S,
    city: S,
    country: S,
    tax_country: N,
    tax_number: S,
    logo_url: S,
    custom_fields: CUSTOM_FIELDS,
  }),
  organization_members: obj({ id: I, first_name: S, last_name: S, email: S, is_admin: B, status: N }),
  organization_teams: obj({ id: I, name: S }),
  eligibility: obj({
    is_completed: B,
    created_at: TS,
    updated_at: TS,
    responses: arrOf(obj({ id: I, name: S, response: ANY })),
  }),
  programs: obj({
    id: I,
    name: S,
    identifier: S,
    summary: S,
    description: S,
    categories: S,
    active: B,
    launched: B,
    access: B,
    publicity: B,
    open_datetime: TS,
    close_datetime: TS,
    no_application_dates: B,
    no_close_date: B,
    grace_period: N,
    applicant_type: N,
    application_prefix: S,
    application_title_help: S,
    require_application_title: B,
    randomize_application_id: B,
    allow_collaborators: B,
    collaborator_domains: ANY,
    limit_collaborator_domains: B,
    collaborator_invite_instructions: S,
    edit_after_submit: B,
    enable_application_limit: B,
    max_applications: N,
    include_deadline_in_reminders: B,
    listing_url: S,
    score_format: N,
    value_type: N,
    value: M,
    max_value: M,
    custom_value: S,
    hide_value_from_applicants: B,
    number_of_awards: N,
    awards_made: N,
    total: M,
    allocated: M,
    paid: M,
    balance: M,
    custom_fields: CUSTOM_FIELDS,
    funding_sources: arrOf(obj({ id: I, fund: NAMED, balance: M })),
  }),
  reports: obj({
    id: I,
    name: S,
    source: N,
    status: N,
    program: NAMED,
    created_by: USER,
    created_at: TS,
    last_generated_at: TS,
    columns: ANY,
    filter: ANY,
    download_link: S,
    report_filename: S,
    file_size: I,
    job_id: S,
    row: N,
    total_rows: N,
    last_error_message: S,
  }),
  // Built by grantflow from a downloaded file (extract/report-file.ts), not a site resource: no drift to find.
  report_downloads: null,
};

/** The JSON kind bit of a present value (0 for null). */
export function kindOf(v: unknown): number {
  switch (typeof v) {
    case 'string':
      return STRING;
    case 'number':
    case 'bigint':
      return NUMBER;
    case 'boolean':
      return BOOLEAN;
    case 'object':
      return v === null ? 0 : Array.isArray(v) ? ARRAY : OBJECT;
    default:
      return 0;
  }
}

/** JSON type name of a value, as the catalog records it. */
export function jsonTypeName(v: unknown): string {
  switch (kindOf(v)) {
    case STRING:
      return 'string';
    case NUMBER:
      return 'number';
    case BOOLEAN:
      return 'boolean';
    case ARRAY:
      return 'array';
    case OBJECT:
      return 'object';
    default:
      return 'null';
  }
}
