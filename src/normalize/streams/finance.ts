import type { JsonObject, JsonValue } from '../../util/json.ts';
import { arr, attrId, bool, int, json, money, obj, optId, reqId, reqTs, text, ts, untyped } from '../coerce.ts';
import type { MappedRow, NormalizeContext, StreamMapping } from '../mapping.ts';
import { QuarantineError } from '../quarantine.ts';
import { customFieldValues, customFieldValuesScope, namedRef, refId, userRef, type Id } from '../refs.ts';
import type { Row } from '../table-def.ts';

/** DecisionRef columns shared by applications and payments. */
function decisionColumns(v: JsonValue | undefined): Row {
  const d = obj(v);
  if (d === null) return { decision_award_id: null, decision: null, awarded: null, awarded_amount: null };
  return {
    decision_award_id: optId(d.id, 'decision.id'),
    decision: int(d.decision),
    awarded: text(d.awarded),
    awarded_amount: money(d.awarded),
  };
}

function paymentRow(out: MappedRow[], r: JsonObject, ctx: NormalizeContext, field: string): Row {
  return {
    id: reqId(r.id, `${field}id`),
    amount: money(r.amount),
    status_id: namedRef(out, 'payment_statuses', r.status, `${field}status`),
    ...decisionColumns(r.decision),
    effective_date: ts(r.effective_date, ctx.siteTimeZone),
    note: text(r.note),
    note_applicant_visible: bool(r.note_applicant_visible),
    created_by_id: userRef(out, r.created_by, `${field}created_by`),
    created_at: field === '' ? reqTs(r.created_at, ctx.siteTimeZone, 'created_at') : ts(r.created_at, ctx.siteTimeZone),
    _raw: JSON.stringify(r),
  };
}

export const paymentsStream: StreamMapping = {
  owns: [
    { table: 'payments', idColumn: 'id' },
    { table: 'payment_sources', idColumn: 'payment_id', from: { key: 'sources', shape: 'array' } },
    customFieldValuesScope('payment'),
  ],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const row = paymentRow(out, r, ctx, '');
    const id = row.id as Id;
    out.unshift({ table: 'payments', row, merge: 'replace' });
    for (const x of arr(r.sources)) {
      const s = obj(x);
      if (s === null) continue;
      const sourceId = optId(s.id, 'sources[].id');
      if (sourceId === null) throw new QuarantineError('sources[] entry without id');
      out.push({
        table: 'payment_sources',
        row: {
          payment_id: id,
          source_id: sourceId,
          transaction_id: attrId(s.transaction_id, 'sources[].transaction_id'),
          transaction_date: ts(s.transaction_date, ctx.siteTimeZone),
          amount: money(s.amount),
          _raw: JSON.stringify(s),
        },
        merge: 'replace',
      });
    }
    customFieldValues(out, 'payment', id, r.custom_fields);
    return out;
  },
};

export const awardsStream: StreamMapping = {
  owns: [
    { table: 'awards', idColumn: 'id' },
    { table: 'award_payments', idColumn: 'award_id', from: { key: 'payments', shape: 'array' } },
    customFieldValuesScope('award'),
  ],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const z = ctx.siteTimeZone;
    const id = reqId(r.id, 'id');
    const row: Row = {
      id,
      application_id: refId(r.application, 'application'),
      program_id: namedRef(out, 'programs', r.program, 'program'),
      applicant_id: userRef(out, r.applicant, 'applicant'),
      decision: int(r.decision),
      awarded: text(r.awarded),
      awarded_amount: money(r.awarded),
      value: money(r.value),
      awarded_at: ts(r.awarded_at, z),
      visible: bool(r.visible),
      notification_message: text(r.notification_message),
      applicant_decision_required: bool(r.applicant_decision_required),
      applicant_decision: int(r.applicant_decision),
      applicant_decision_deadline: ts(r.applicant_decision_deadline, z),
      applicant_decision_submitted_on: ts(r.applicant_decision_submitted_on, z),
      applicant_note: text(r.applicant_note),
      created_at: reqTs(r.created_at, z, 'created_at'),
      updated_at: reqTs(r.updated_at, z, 'updated_at'),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'awards', row, merge: 'replace' });
    for (const x of arr(r.payments)) {
      const p = obj(x);
      if (p === null) continue;
      const paymentId = optId(p.id, 'payments[].id');
      if (paymentId === null) throw new QuarantineError('payments[] entry without id');
      out.push({
        table: 'award_payments',
        row: {
          award_id: id,
          payment_id: paymentId,
          amount: money(p.amount),
          status_id: namedRef(out, 'payment_statuses', p.status, 'payments[].status'),
          _raw: JSON.stringify(p),
        },
        merge: 'replace',
      });
    }
    customFieldValues(out, 'award', id, r.custom_fields);
    return out;
  },
};

const PROGRAM = 1;
const FUND = 2;
const APPLICATION = 3;

/**
 * The polymorphic source/destination: its type says which `<side>_<kind>_id` column holds its id (and which
 * dimension gets a row); the object itself is kept in `<side>_json` whatever its shape.
 */
function endpoint(
  out: MappedRow[],
  side: 'source' | 'destination',
  type: number | null,
  v: JsonValue | undefined,
): Row {
  const row: Row = {
    [`${side}_type`]: type,
    [`${side}_program_id`]: null,
    [`${side}_fund_id`]: null,
    [`${side}_application_id`]: null,
    [`${side}_json`]: json(v),
  };
  if (type === PROGRAM) row[`${side}_program_id`] = namedRef(out, 'programs', v, side);
  else if (type === FUND) row[`${side}_fund_id`] = namedRef(out, 'funds', v, side);
  else if (type === APPLICATION) row[`${side}_application_id`] = refId(v, side);
  return row;
}

export const financialTransactionsStream: StreamMapping = {
  owns: [{ table: 'financial_transactions', idColumn: 'id' }],
  cascades: [],
  map(r, ctx) {
    const out: MappedRow[] = [];
    const z = ctx.siteTimeZone;
    const payment = obj(r.payment);
    let paymentId: Id | null = null;
    if (payment !== null && payment.id == null) untyped(payment);
    else if (payment !== null) {
      // The embedded Payment fills a ref-only payments row; its bridges belong to the payments stream.
      const p = paymentRow(out, payment, ctx, 'payment.');
      paymentId = p.id as Id;
      out.push({ table: 'payments', row: p, merge: 'coalesce' });
    }
    const row: Row = {
      id: reqId(r.id, 'id'),
      transaction_id: attrId(r.transaction_id, 'transaction_id'),
      transaction_type: int(r.transaction_type),
      amount: money(r.amount),
      transaction_date: reqTs(r.transaction_date, z, 'transaction_date'),
      ...endpoint(out, 'source', int(r.source_type), r.source),
      new_source_balance: money(r.new_source_balance),
      ...endpoint(out, 'destination', int(r.destination_type), r.destination),
      new_destination_balance: money(r.new_destination_balance),
      payment_id: paymentId,
      notes: text(r.notes),
      created_by_id: userRef(out, r.created_by, 'created_by'),
      updated_by_id: userRef(out, r.updated_by, 'updated_by'),
      created_at: reqTs(r.created_at, z, 'created_at'),
      updated_at: reqTs(r.updated_at, z, 'updated_at'),
      _raw: JSON.stringify(r),
    };
    out.unshift({ table: 'financial_transactions', row, merge: 'replace' });
    return out;
  },
};
