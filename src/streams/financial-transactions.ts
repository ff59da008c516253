import type { JsonValue } from '../util/json.ts';
import { obj, untyped } from '../normalize/coerce.ts';
import { ANY, ARRAY, OBJECT } from '../normalize/field-kinds.ts';
import type { MappedRow, NormalizeContext } from '../normalize/mapping.ts';
import { namedRef, refId, type Id } from '../normalize/refs.ts';
import type { ColumnDef, Row, TableDef } from '../normalize/table-def.ts';
import { readerOf } from './column-readers.ts';
import { col, enumCol, freeText, id, money, ref, tsCol } from './columns.ts';
import { deriveFields } from './derive-fields.ts';
import { embeddedRowReader } from './derive-mapping.ts';
import { payments } from './payments.ts';
import { defineStream } from './stream-definition.ts';

const PROGRAM = 1;
const FUND = 2;
const APPLICATION = 3;

type Side = 'source' | 'destination';

/**
 * The polymorphic source/destination: its type says which `<side>_<kind>_id` column holds its id (set by `finish`,
 * which feeds that dimension); the object itself is kept in `<side>_json` whatever its shape.
 */
const endpointColumns = (side: Side): ColumnDef[] => [
  enumCol(
    `${side}_type`,
    `${side}_type`,
    `Kind of ${side} (enum ${side}_type: 0 none, 1 Program, 2 Fund, 3 Application).`,
  ),
  ref(`${side}_program_id`, 'programs', `The ${side} program when ${side}_type is 1.`, { read: 'computed' }),
  ref(`${side}_fund_id`, 'funds', `The ${side} fund when ${side}_type is 2.`, { read: 'computed' }),
  ref(`${side}_application_id`, 'applications', `The ${side} application when ${side}_type is 3.`, {
    read: 'computed',
  }),
  col(`${side}_json`, 'json', `The ${side} object as sent (its shape varies by type).`, {
    source: side,
    // An application's reference names its applicant and title.
    personal: 'identifier_and_free_text',
  }),
  money(`new_${side}_balance`, `Balance of the ${side} after the transaction`),
];

function endpoint(out: MappedRow[], row: Row, side: Side, v: JsonValue | undefined): void {
  const type = row[`${side}_type`];
  if (type === PROGRAM) row[`${side}_program_id`] = namedRef(out, 'programs', v, side);
  else if (type === FUND) row[`${side}_fund_id`] = namedRef(out, 'funds', v, side);
  else if (type === APPLICATION) row[`${side}_application_id`] = refId(v, side);
}

/** The payments table as embedded: its timestamp does not gate the transaction (the transaction's own do). */
const embeddedPayments: TableDef = {
  ...payments.table,
  columns: payments.table.columns.map((c) => (readerOf(c) === 'strictTs' ? { ...c, read: 'ts' } : c)),
};

const readEmbeddedPayment = embeddedRowReader(embeddedPayments, 'payment.', 'financial_transactions');

/** The embedded Payment fills a ref-only payments row; its bridges belong to the payments stream. */
function embeddedPayment(v: JsonValue | undefined, out: MappedRow[], ctx: NormalizeContext): Id | null {
  const payment = obj(v);
  if (payment === null) return null;
  if (payment.id == null) {
    untyped(payment);
    return null;
  }
  const row = readEmbeddedPayment(payment, out, ctx);
  out.push({ table: 'payments', row, merge: 'coalesce' });
  return row.id as Id;
}

export const financialTransactions = defineStream({
  name: 'financial_transactions',
  path: '/api/financial-transactions/',
  description: 'Financial transactions (spec 4.5.1; Financial Management only).',
  skipOn: { 403: 'Financial Management is not enabled or not permitted', 404: 'Financial Management is not enabled' },
  table: {
    name: 'financial_transactions',
    kind: 'entity',
    description: 'Money movements between funds, programs and applications (GET /api/financial-transactions/).',
    primaryKey: ['id'],
    columns: [
      id('Transaction id.'),
      col('transaction_id', 'bigint', 'Incremental unique transaction number.'),
      enumCol(
        'transaction_type',
        'transaction_type',
        'Type (enum transaction_type: 0 Deposit, 1 Withdrawal, 2 Transfer, 3 Payment, 4 unlabelled).',
      ),
      money('amount', 'Money moving'),
      tsCol('transaction_date', 'Date of the transaction', { read: 'strictTs' }),
      ...endpointColumns('source'),
      ...endpointColumns('destination'),
      ref('payment_id', 'payments', 'Payment the transaction belongs to.', { read: 'computed' }),
      col('notes', 'text', 'Notes.', freeText),
      ref('created_by_id', 'users', 'User who created the transaction.'),
      ref('updated_by_id', 'users', 'User who last updated the transaction.'),
      tsCol('created_at', 'When the transaction was created', { read: 'strictTs' }),
      tsCol('updated_at', 'When the transaction was last updated', { read: 'strictTs' }),
    ],
  },
  finish(record, row, out, ctx) {
    endpoint(out, row, 'source', record.source);
    endpoint(out, row, 'destination', record.destination);
    row.payment_id = embeddedPayment(record.payment, out, ctx);
  },
  reads: {
    // Read as references by `finish`, which feeds their dimension itself.
    source: { ...ANY, ref: true },
    destination: { ...ANY, ref: true },
    // An embedded payment holds what a payments record does.
    payment: { ...deriveFields(payments)!, kinds: OBJECT | ARRAY },
  },
});
