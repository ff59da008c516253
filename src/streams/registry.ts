import { withRecordWalk } from '../normalize/record-walk.ts';
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
import { deriveFields } from './derive-fields.ts';
import { deriveMapping } from './derive-mapping.ts';
import { sharedTables } from './dimensions.ts';
import type { StreamDefinition } from './stream-definition.ts';

/**
 * Every stream of the site (spec 4.1-4.12), in the order a sync starts them: the one list behind the extraction,
 * the table catalog, the simulator's routes and the tests' lists. Adding an endpoint is its file and a line here.
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

const definitions: StreamDefinition[] = [...builtinStreams];
const tableList: TableDef[] = [];
const tableIndex = new Map<string, TableDef>();
const mappings: Record<string, StreamMapping> = {};
const declared: Record<string, StreamMapping> = {};
const fieldTrees: Record<string, FieldNode | null> = {};
const names: string[] = [];

function tablesOf(def: StreamDefinition): TableDef[] {
  return [def.table, ...(def.bridges ?? []), ...(def.otherTables ?? [])];
}

function add(def: StreamDefinition): void {
  const fields = deriveFields(def);
  const mapping = deriveMapping(def);
  declared[def.name] = mapping;
  mappings[def.name] = fields === null ? mapping : withRecordWalk(mapping, fields);
  fieldTrees[def.name] = fields;
  names.push(def.name);
}

function rebuildTables(): void {
  tableList.length = 0;
  tableIndex.clear();
  for (const t of [...definitions.flatMap(tablesOf), ...sharedTables]) {
    tableList.push(t);
    tableIndex.set(t.name, t);
  }
}

for (const def of definitions) add(def);
rebuildTables();

/** The streams, in run order (live: a registered stream joins it). */
export const streamCatalog: readonly StreamDefinition[] = definitions;
/** Every table of the warehouse schema: each stream's tables, then the shared ones (live). */
export const tables: readonly TableDef[] = tableList;
/** Each stream's mapping: declared columns, bridges, `finish`, and the record walk (live). */
export const streamMappings: Readonly<Record<StreamName, StreamMapping>> &
  Readonly<Record<string, StreamMapping | undefined>> = mappings as Record<StreamName, StreamMapping>;
/** The mappings alone, without the record walk (a test checks every field they read is in `streamFields`). */
export const declaredMappings: Readonly<Record<string, StreamMapping | undefined>> = declared;
/** Each stream's known source fields, for the drift catalog; null for streams not read from the site (live). */
export const streamFields: Readonly<Record<string, FieldNode | null>> = fieldTrees;
/** Stream names in run order (live). */
export const streamNames: readonly string[] = names;
/** The built-in streams' names, typed. */
export const builtinStreamNames: readonly StreamName[] = builtinStreams.map((s) => s.name);

/**
 * Whether `name` is a built-in stream. One registered at run time exists in the registering thread only: a worker
 * thread (the replay's normaliser) starts from the built-in list and does not know it.
 */
export function isBuiltinStream(name: string): boolean {
  return builtinStreams.some((s) => s.name === name);
}

/** A stream's mapping; an unknown name is a bug of the caller (names are checked where they are read). */
export function mappingOf(name: string): StreamMapping {
  const m = mappings[name];
  if (m === undefined) throw new Error(`no stream named ${name}`);
  return m;
}

export function streamByName(name: string): StreamDefinition | undefined {
  return definitions.find((s) => s.name === name);
}

export function isStreamName(s: string): boolean {
  return names.includes(s);
}

export function tableByName(name: string): TableDef | undefined {
  return tableIndex.get(name);
}

/**
 * Adds a stream beyond the built-in ones (an endpoint a site has that the spec does not list): it is extracted,
 * mapped, created and documented like the others from then on. Its name, path and table names must be new.
 * Returns what takes it out again, for code that shares the process with others (a test file among many).
 */
export function registerStream(def: StreamDefinition): () => void {
  if (streamByName(def.name) !== undefined) throw new Error(`stream ${def.name} is already registered`);
  if (definitions.some((d) => d.path === def.path)) throw new Error(`path ${def.path} already belongs to a stream`);
  for (const t of tablesOf(def))
    if (tableIndex.has(t.name)) throw new Error(`table ${t.name} of stream ${def.name} is already declared`);
  if (def.parent !== undefined && streamByName(def.parent.stream) === undefined)
    throw new Error(`stream ${def.name}: parent stream ${def.parent.stream} is not registered`);
  definitions.push(def);
  add(def);
  rebuildTables();
  return () => unregister(def);
}

function unregister(def: StreamDefinition): void {
  if (definitions.some((d) => d.parent?.stream === def.name))
    throw new Error(`stream ${def.name} is the parent of a registered stream: take that one out first`);
  const at = definitions.indexOf(def);
  if (at === -1) return;
  definitions.splice(at, 1);
  names.splice(names.indexOf(def.name), 1);
  delete declared[def.name];
  delete mappings[def.name];
  delete fieldTrees[def.name];
  rebuildTables();
}
