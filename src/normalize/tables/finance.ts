import type { TableDef } from '../table-def.ts';
import { col, enumCol, id, money, ref, req, tsCol } from './columns.ts';

const endpoint = (side: 'source' | 'destination'): TableDef['columns'] => [
  enumCol(
    `${side}_type`,
    `${side}_type`,
    `Kind of ${side} (enum ${side}_type: 0 none, 1 Program, 2 Fund, 3 Application).`,
  ),
  ref(`${side}_program_id`, 'programs', `The ${side} program when ${side}_type is 1.`),
  ref(`${side}_fund_id`, 'funds', `The ${side} fund when ${side}_type is 2.`),
  ref(`${side}_application_id`, 'applications', `The ${side} application when ${side}_type is 3.`),
  col(`${side}_json`, 'json', `The ${side} object as sent (its shape varies by type).`),
  money(`new_${side}_balance`, `Balance of the ${side} after the transaction`),
];

export const financialTransactions: TableDef = {
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
    tsCol('transaction_date', 'Date of the transaction'),
    ...endpoint('source'),
    ...endpoint('destination'),
    ref('payment_id', 'payments', 'Payment the transaction belongs to.'),
    col('notes', 'text', 'Notes.'),
    ref('created_by_id', 'users', 'User who created the transaction.'),
    ref('updated_by_id', 'users', 'User who last updated the transaction.'),
    tsCol('created_at', 'When the transaction was created'),
    tsCol('updated_at', 'When the transaction was last updated'),
  ],
};

export const awards: TableDef = {
  name: 'awards',
  kind: 'entity',
  description: 'Application awards and declines (GET /api/awards/).',
  primaryKey: ['id'],
  columns: [
    id('Award id.'),
    ref('application_id', 'applications', 'Application awarded or declined.'),
    ref('program_id', 'programs', 'Program.'),
    ref('applicant_id', 'users', 'Applicant.'),
    enumCol('decision', 'award_decision', 'Decision (enum award_decision: 0 Awarded, 1 Declined).'),
    col('awarded', 'text', 'Awarded value exactly as the API sends it (a string).'),
    money('awarded_amount', 'Awarded value parsed as money; NULL when the text is not an unambiguous amount'),
    money('value', 'Monetary value of the award'),
    tsCol('awarded_at', 'When the award was made'),
    col('visible', 'boolean', 'Visible to the applicant.'),
    col('notification_message', 'text', 'Message shown to the applicant on award.'),
    col('applicant_decision_required', 'boolean', 'Applicant must accept or decline.'),
    enumCol(
      'applicant_decision',
      'applicant_decision',
      'Applicant decision (enum applicant_decision: 0 Pending, 2 Accepted, 3 Declined).',
    ),
    tsCol('applicant_decision_deadline', 'Deadline of the applicant decision'),
    tsCol('applicant_decision_submitted_on', 'When the applicant decided'),
    col('applicant_note', 'text', 'Note from the applicant to administrators.'),
    tsCol('created_at', 'When the award was created'),
    tsCol('updated_at', 'When the award was last updated'),
  ],
};

export const awardPayments: TableDef = {
  name: 'award_payments',
  kind: 'bridge',
  description: 'Payments listed on each award (awards[].payments).',
  primaryKey: ['award_id', 'payment_id'],
  columns: [
    ref('award_id', 'awards', 'Award.', true),
    ref('payment_id', 'payments', 'Payment.', true),
    money('amount', 'Amount of the payment'),
    ref('status_id', 'payment_statuses', 'Payment status.'),
  ],
};

export const payments: TableDef = {
  name: 'payments',
  kind: 'entity',
  description:
    'Payments of awards (GET /api/payments/), plus payments embedded in financial transactions (ref-only rows).',
  primaryKey: ['id'],
  columns: [
    id('Payment id.'),
    money('amount', 'Total across all payment sources'),
    ref('status_id', 'payment_statuses', 'Payment status.'),
    ref('decision_award_id', 'awards', 'Award paid (DecisionRef id).'),
    enumCol('decision', 'award_decision', 'Decision of that award (enum award_decision).'),
    col('awarded', 'text', 'Awarded value of that award exactly as sent (a string).'),
    money('awarded_amount', 'Awarded value parsed as money; NULL when the text is not an unambiguous amount'),
    tsCol('effective_date', 'Effective date of the payment'),
    col('note', 'text', 'Payment note.'),
    col('note_applicant_visible', 'boolean', 'The note is visible to the applicant.'),
    ref('created_by_id', 'users', 'User who created the payment.'),
    tsCol('created_at', 'When the payment was created'),
  ],
};

export const paymentSources: TableDef = {
  name: 'payment_sources',
  kind: 'bridge',
  description: 'Sources a payment draws on (payments[].sources), one per financial transaction.',
  primaryKey: ['payment_id', 'source_id'],
  columns: [
    ref('payment_id', 'payments', 'Payment.', true),
    req(
      'source_id',
      'bigint',
      'Id of the source entry as sent (sources[].id; the spec does not say what it identifies).',
    ),
    col('transaction_id', 'bigint', 'Transaction number (financial_transactions.transaction_id) of this source.'),
    tsCol('transaction_date', 'Date of that transaction'),
    money('amount', 'Amount drawn from this source'),
  ],
};
