import type { StreamDef } from '../stream-def.ts';
import { activity } from './activity.ts';
import { apiLog } from './api-log.ts';
import { applicationNotes } from './application-notes.ts';
import { applicationStages } from './application-stages.ts';
import { applicationTasks } from './application-tasks.ts';
import { applications } from './applications.ts';
import { assignments } from './assignments.ts';
import { awards } from './awards.ts';
import { budgets } from './budgets.ts';
import { customFields } from './custom-fields.ts';
import { eligibility } from './eligibility.ts';
import { financialTransactions } from './financial-transactions.ts';
import { funds } from './funds.ts';
import { organizationMembers } from './organization-members.ts';
import { organizationTeams } from './organization-teams.ts';
import { organizations } from './organizations.ts';
import { payments } from './payments.ts';
import { programs } from './programs.ts';
import { reportDownloads } from './report-downloads.ts';
import { reports } from './reports.ts';
import { teamAssignments } from './team-assignments.ts';

/** Every list endpoint of spec sections 4.1-4.12; adding an endpoint is adding one entry. */
export const streamCatalog: readonly StreamDef[] = [
  programs,
  applications,
  applicationStages,
  applicationTasks,
  applicationNotes,
  assignments,
  teamAssignments,
  customFields,
  financialTransactions,
  funds,
  budgets,
  awards,
  payments,
  organizations,
  organizationMembers,
  organizationTeams,
  eligibility,
  reports,
  reportDownloads,
  activity,
  apiLog,
];

export function streamByName(name: string): StreamDef | undefined {
  return streamCatalog.find((s) => s.name === name);
}
