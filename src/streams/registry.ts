import type { StreamMapping } from '../normalize/mapping.ts';
import type { TableDef } from '../normalize/table-def.ts';
import type { FieldNode } from '../normalize/field-kinds.ts';
import { programs } from './programs.ts';
import { applications } from './applications.ts';
import { applicationStages } from './application-stages.ts';
import { applicationTasks } from './application-tasks.ts';
import { applicationNotes } from './application-notes.ts';
import { assignments } from './assignments.ts';
import { teamAssignments } from './team-assignments.ts';
import { customFields } from './custom-fields.ts';
import { financialTransactions } from './financial-transactions.ts';
import { funds } from './funds.ts';
import { budgets } from './budgets.ts';
import { awards } from './awards.ts';
import { payments } from './payments.ts';
import { organizations } from './organizations.ts';
import { organizationMembers } from './organization-members.ts';
import { organizationTeams } from './organization-teams.ts';
import { eligibility } from './eligibility.ts';
import { reports } from './reports.ts';
import { reportDownloads } from './report-downloads.ts';
import { activity } from './activity.ts';
import { apiLog } from './api-log.ts';
import { buildStreamCatalog, type StreamCatalog } from './catalog.ts';
import type { StreamDefinition } from './stream-definition.ts';
import type { StreamDef } from './stream-def.ts';

/**
 * Every stream of the site (spec 4.1-4.12), in the order a sync starts them: the one list behind the default catalog
 * (the extraction, the table catalog), the simulator's routes and the tests' lists. Adding an endpoint is its file
 * and a line here.
 */
export const builtinStreams = [
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
] as const;

export type StreamName = (typeof builtinStreams)[number]['name'];

/** The catalog of the built-in streams: what the CLI, the snapshots and the simulator know. */
export const defaultCatalog: StreamCatalog = buildStreamCatalog(builtinStreams);

/** The built-in streams, in run order. */
export const streamCatalog: readonly StreamDefinition[] = defaultCatalog.streams;
/** Every table of the built-in schema: each stream's tables, then the shared ones. */
export const tables: readonly TableDef[] = defaultCatalog.tables;
/** Each built-in stream's mapping: declared columns, bridges, `finish`, and the record walk. */
export const streamMappings = defaultCatalog.mappings as Readonly<Record<StreamName, StreamMapping>> &
  Readonly<Record<string, StreamMapping | undefined>>;
/** The mappings alone, without the record walk (a test checks every field they read is in `streamFields`). */
export const declaredMappings: Readonly<Record<string, StreamMapping | undefined>> = defaultCatalog.declaredMappings;
/** Each stream's known source fields, for the drift catalog; null for streams not read from the site. */
export const streamFields: Readonly<Record<string, FieldNode | null>> = defaultCatalog.fields;
/** Stream names in run order. */
export const streamNames: readonly string[] = defaultCatalog.names;
/** The built-in streams' names, typed. */
export const builtinStreamNames: readonly StreamName[] = builtinStreams.map((s) => s.name);

/** Whether `def` is a built-in stream: one only a catalog of its own knows is unknown to a replay's worker thread. */
export function isBuiltinStream(def: StreamDef): boolean {
  return defaultCatalog.streamByName(def.name) === def;
}

export const mappingOf = defaultCatalog.mappingOf;
export const streamByName = defaultCatalog.streamByName;
export const isStreamName = defaultCatalog.isStreamName;
export const tableByName = defaultCatalog.tableByName;
/** `--streams a,b` among the built-in streams (see StreamCatalog.select). */
export const selectStreams = defaultCatalog.select;
