import type { TableDef } from '../table-def.ts';
import * as apps from './applications.ts';
import * as dims from './dimensions.ts';
import * as fin from './finance.ts';
import * as logs from './logs.ts';
import * as orgs from './organizations.ts';
import * as progs from './programs.ts';
import * as reportFiles from './report-files.ts';

/** The whole catalog, in a readable order (entities, then their bridges, then dimensions, then bookkeeping). */
export const tables: readonly TableDef[] = [
  progs.programs,
  progs.programFundingSources,
  apps.applications,
  apps.applicationCollaborators,
  apps.applicationLabels,
  apps.applicationStages,
  apps.applicationTasks,
  apps.taskResponses,
  apps.applicationNotes,
  apps.assignments,
  apps.teamAssignments,
  dims.teams,
  dims.users,
  orgs.organizations,
  orgs.organizationMembers,
  orgs.eligibility,
  orgs.eligibilityResponses,
  dims.stages,
  dims.statuses,
  dims.paymentStatuses,
  dims.tasks,
  progs.customFields,
  progs.customFieldValues,
  fin.funds,
  fin.budgets,
  fin.financialTransactions,
  fin.awards,
  fin.awardPayments,
  fin.payments,
  fin.paymentSources,
  logs.activity,
  logs.apiLog,
  logs.reports,
  reportFiles.reportColumns,
  reportFiles.reportRows,
  dims.enumLabels,
  dims.quarantine,
];
