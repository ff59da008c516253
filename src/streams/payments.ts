import { col, enumCol, freeText, id, money, ref, req, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const payments = defineStream({
  name: 'payments',
  path: '/api/payments/',
  description: 'Payments (spec 4.6.3; administrators with `Award Applications`).',
  skipOn: { 403: 'needs the `Award Applications` permission' },
  customFields: 'payment',
  table: {
    name: 'payments',
    kind: 'entity',
    description:
      'Payments of awards (GET /api/payments/), plus payments embedded in financial transactions (ref-only rows).',
    primaryKey: ['id'],
    columns: [
      id('Payment id.'),
      money('amount', 'Total across all payment sources'),
      ref('status_id', 'payment_statuses', 'Payment status.'),
      // The DecisionRef: its id, and its decision and awarded value as the site sends them.
      ref('decision_award_id', 'awards', 'Award paid (DecisionRef id).', { source: 'decision.id', read: 'id' }),
      enumCol('decision', 'award_decision', 'Decision of that award (enum award_decision).', 'integer', {
        source: 'decision.decision',
      }),
      col(
        'awarded_as_sent',
        'text',
        'Awarded value of that award as sent, text such as $27,986.17 (decision.awarded); the amount is awarded_amount.',
        { source: 'decision.awarded' },
      ),
      money('awarded_amount', 'Awarded value parsed as money; NULL when the text is not an unambiguous amount', {
        source: 'decision.awarded',
      }),
      tsCol('effective_date', 'Effective date of the payment'),
      col('note', 'text', 'Payment note.', freeText),
      col('note_applicant_visible', 'boolean', 'The note is visible to the applicant.'),
      ref('created_by_id', 'users', 'User who created the payment.'),
      tsCol('created_at', 'When the payment was created', { read: 'strictTs' }),
    ],
  },
  bridges: [
    {
      name: 'payment_sources',
      from: 'sources',
      kind: 'bridge',
      description: 'Sources a payment draws on (payments[].sources), one per financial transaction.',
      primaryKey: ['payment_id', 'source_id'],
      columns: [
        ref('payment_id', 'payments', 'Payment.', { notNull: true, read: 'owner' }),
        req(
          'source_id',
          'bigint',
          'Id of the source entry as sent (sources[].id; the spec does not say what it identifies).',
          { source: 'id', read: 'id', required: true },
        ),
        col('transaction_id', 'bigint', 'Transaction number (financial_transactions.transaction_id) of this source.'),
        tsCol('transaction_date', 'Date of that transaction'),
        money('amount', 'Amount drawn from this source'),
      ],
    },
  ],
});
