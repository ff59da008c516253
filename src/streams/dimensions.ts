import type { TableDef } from '../normalize/table-def.ts';
import * as apps from '../normalize/tables/programs.ts';
import * as dims from '../normalize/tables/dimensions.ts';

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
  apps.customFieldValues,
  dims.enumLabels,
  dims.quarantine,
];
