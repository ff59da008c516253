/**
 * Normalisation: the table catalog (single source of the warehouse schema) and the declarative mapping of
 * each stream's records to typed rows. See tables/ for the schema and streams/ for the mappings.
 */
import { streamNames, type MappedRow, type StreamMapping, type StreamName } from './mapping.ts';
import { walkRecord } from './record-walk.ts';
import { sourceFields } from './source-fields.ts';
import {
  applicationNotesStream,
  applicationsStream,
  applicationStagesStream,
  applicationTasksStream,
} from './streams/applications.ts';
import {
  awardsStream,
  budgetsStream,
  financialTransactionsStream,
  fundsStream,
  paymentsStream,
} from './streams/finance.ts';
import {
  eligibilityStream,
  organizationMembersStream,
  organizationsStream,
  organizationTeamsStream,
} from './streams/organizations.ts';
import { customFieldsStream, programsStream, reportsStream } from './streams/programs.ts';
import { reportDownloadsStream } from './streams/report-downloads.ts';
import { activityStream, apiLogStream, assignmentsStream, teamAssignmentsStream } from './streams/reviews.ts';
import type { TableDef } from './table-def.ts';
import { tables } from './tables/index.ts';

export { tables };
export { enumLabelRows, enums, enumNames, type EnumName } from './enums.ts';
export { QuarantineError, isQuarantineError, quarantineRow, recordKey, canonicalJson } from './quarantine.ts';
export { naiveTimestamps, parseTimestamp } from './timestamp.ts';
export { walkRecord, type FieldObserver } from './record-walk.ts';
export { sourceFields, jsonTypeName, type FieldNode } from './source-fields.ts';
export { parseMoney } from './money.ts';
export { untypedValues } from './coerce.ts';
export {
  streamNames,
  isStreamName,
  type StreamName,
  type StreamMapping,
  type MappedRow,
  type NormalizeContext,
  type OwnedScope,
} from './mapping.ts';

/** The mappings alone, without the record walk (tests compare what they read with source-fields.ts). */
export const definedMappings: Readonly<Record<StreamName, StreamMapping>> = {
  activity: activityStream,
  applications: applicationsStream,
  application_stages: applicationStagesStream,
  application_tasks: applicationTasksStream,
  application_notes: applicationNotesStream,
  assignments: assignmentsStream,
  team_assignments: teamAssignmentsStream,
  custom_fields: customFieldsStream,
  financial_transactions: financialTransactionsStream,
  funds: fundsStream,
  budgets: budgetsStream,
  awards: awardsStream,
  payments: paymentsStream,
  api_log: apiLogStream,
  organizations: organizationsStream,
  organization_members: organizationMembersStream,
  organization_teams: organizationTeamsStream,
  eligibility: eligibilityStream,
  programs: programsStream,
  reports: reportsStream,
  report_downloads: reportDownloadsStream,
};

/** Rows of references found beside the mapping; reused (map is synchronous) so a record allocates no array for it. */
const found: MappedRow[] = [];

/**
 * A stream's mapping plus the record walk (record-walk.ts): references wherever they are feed their dimensions, and
 * drift is told to `ctx.fields`. The walk runs first, so a record the mapping quarantines still reports its drift.
 */
function withRecordWalk(name: StreamName, mapping: StreamMapping): StreamMapping {
  const root = sourceFields[name];
  if (root === null) return mapping;
  return {
    owns: mapping.owns,
    cascades: mapping.cascades,
    map(record, ctx) {
      ctx.fields?.startRecord();
      found.length = 0;
      walkRecord(record, root, found, ctx.fields);
      const out = mapping.map(record, ctx);
      for (const row of found) out.push(row);
      found.length = 0;
      return out;
    },
  };
}

export const streamMappings = Object.fromEntries(
  streamNames.map((name) => [name, withRecordWalk(name, definedMappings[name])]),
) as Readonly<Record<StreamName, StreamMapping>>;

const byName = new Map(tables.map((t) => [t.name, t]));

export function tableByName(name: string): TableDef | undefined {
  return byName.get(name);
}

/** Convenience for callers and tests: group mapped rows by table. */
export function groupByTable(rows: readonly MappedRow[]): Map<string, MappedRow[]> {
  const m = new Map<string, MappedRow[]>();
  for (const r of rows) {
    const list = m.get(r.table);
    if (list === undefined) m.set(r.table, [r]);
    else list.push(r);
  }
  return m;
}
