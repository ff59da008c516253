import { col, enumCol, freeText, id, money, ref, tsCol } from './columns.ts';
import { defineStream } from './stream-definition.ts';

export const awards = defineStream({
  name: 'awards',
  path: '/api/awards/',
  description: 'Application awards visible to the caller (spec 4.6.1).',
  skipOn: { 403: 'needs `View Applications`' },
  customFields: 'award',
  table: {
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
      col(
        'awarded_as_sent',
        'text',
        'Awarded value as the API sends it, text such as $27,986.17 (awarded); the amount is awarded_amount.',
        { source: 'awarded' },
      ),
      money('awarded_amount', 'Awarded value parsed as money; NULL when the text is not an unambiguous amount', {
        source: 'awarded',
      }),
      money('value', 'Monetary value of the award'),
      tsCol('awarded_at', 'When the award was made'),
      col('visible', 'boolean', 'Visible to the applicant.'),
      col('notification_message', 'text', 'Message shown to the applicant on award.', freeText),
      col('applicant_decision_required', 'boolean', 'Applicant must accept or decline.'),
      enumCol(
        'applicant_decision',
        'applicant_decision',
        'Applicant decision (enum applicant_decision: 0 Pending, 2 Accepted, 3 Declined).',
      ),
      tsCol('applicant_decision_deadline', 'Deadline of the applicant decision'),
      tsCol('applicant_decision_submitted_on', 'When the applicant decided'),
      col('applicant_note', 'text', 'Note from the applicant to administrators.', freeText),
      tsCol('created_at', 'When the award was created', { read: 'strictTs' }),
      tsCol('updated_at', 'When the award was last updated', { read: 'strictTs' }),
    ],
  },
  bridges: [
    {
      name: 'award_payments',
      from: 'payments',
      kind: 'bridge',
      description: 'Payments listed on each award (awards[].payments).',
      primaryKey: ['award_id', 'payment_id'],
      columns: [
        ref('award_id', 'awards', 'Award.', { notNull: true, read: 'owner' }),
        ref('payment_id', 'payments', 'Payment.', { notNull: true, source: 'id', read: 'id', required: true }),
        money('amount', 'Amount of the payment'),
        ref('status_id', 'payment_statuses', 'Payment status.'),
      ],
    },
  ],
});
