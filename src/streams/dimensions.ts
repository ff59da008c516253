import type { TableDef } from '../normalize/table-def.ts';
import * as dims from '../normalize/tables/dimensions.ts';
import { col, enumCol, ref, req } from './columns.ts';

/** Every entity stream with `customFields` writes its record's `custom_fields` entries here (derive-mapping.ts). */
export const customFieldValues: TableDef = {
  name: 'custom_field_values',
  kind: 'bridge',
  description:
    'Custom field values of applications, programs, funds, payments, awards and organizations (their custom_fields arrays).',
  primaryKey: ['entity_type', 'entity_id', 'field_id'],
  columns: [
    enumCol(
      'entity_type',
      'custom_field_entity',
      'Kind of record carrying the value (enum custom_field_entity: application, program, fund, payment, award, organization).',
      'text',
      { notNull: true },
    ),
    req('entity_id', 'bigint', 'Id of that record (in the table named by entity_type).'),
    ref('field_id', 'custom_fields', 'Custom field.', { notNull: true }),
    col('name', 'text', 'Field name as sent with the value.'),
    col('value', 'text', 'Value as sent (text; non-string values as JSON text).'),
  ],
};

/**
 * Tables no one stream owns: dimensions built from references wherever they appear, the custom field values every
 * entity stream writes, and the labels and quarantine grantflow itself fills.
 */
export const sharedTables: readonly TableDef[] = [
  dims.users,
  dims.stages,
  dims.statuses,
  dims.paymentStatuses,
  dims.tasks,
  customFieldValues,
  dims.enumLabels,
  dims.quarantine,
];
