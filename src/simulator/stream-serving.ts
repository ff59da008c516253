import type { JsonObject } from '../util/json.ts';
import { builtinStreams, streamByName, type StreamName } from '../streams/registry.ts';
import type { Dataset, ReportFile } from './dataset.ts';
import { configFrom, type Features, type SimConfig } from './options.ts';
import { reportFile } from './report-files.ts';
import { servedTask } from './task-answers.ts';

/**
 * How the simulated site serves each stream of the registry (src/streams/registry.ts) at the stream's `path`: the one
 * place that says where a stream's records live in the dataset. Typed by StreamName, so a stream added to the
 * registry does not compile until it is given here; the list routes (read-routes.ts), `control.collection` and the
 * tests that walk every stream all read it. A function's string answer is the detail of the 404 served instead
 * (a parent that does not exist, an organization without eligibility, a report not generated).
 */
interface Access {
  /** Every permission listed is needed (403 otherwise). */
  readonly permissions?: readonly string[];
  /** A disabled feature answers 403 (financial management) or 404 (eligibility). */
  readonly feature?: keyof Features;
}

/** Arguments of every serving function; `parentId` is the fan-out parent's id (undefined for a top-level list). */
type Serve<T> = (ds: Dataset, parentId: number | undefined, config: Readonly<SimConfig>) => T | string;

export interface ListServing extends Access {
  readonly shape: 'list';
  /** The records in id order (`desc` lists are served reversed). */
  readonly records: Serve<readonly JsonObject[]>;
  /** The exact-match filters the spec lists for the endpoint. */
  readonly filters?: readonly string[];
  /** Newest first (id descending). */
  readonly desc?: true;
}

export interface ObjectServing extends Access {
  readonly shape: 'object';
  readonly record: Serve<JsonObject>;
}

export interface DownloadServing extends Access {
  readonly shape: 'download';
  readonly file: Serve<ReportFile>;
}

export type StreamServing = ListServing | ObjectServing | DownloadServing;

const FIN = ['Financial Management'];
const VIEW = ['View Applications'];
const ORG_ADMIN = ['Assume role'];

const top = (pick: (ds: Dataset) => readonly JsonObject[]) => (ds: Dataset) => pick(ds);

/** An application's stages, tasks or notes (tasks with answers in the configured shape). */
function ofApplication(kind: 'stages' | 'tasks' | 'notes'): Serve<readonly JsonObject[]> {
  return (ds, parentId, config) => {
    const children = ds.children(parentId ?? -1);
    if (!children) return 'Application not found.';
    return kind === 'tasks' ? children.tasks.map((t) => servedTask(t, config.answerShape)) : children[kind];
  };
}

function ofOrganization(pick: (ds: Dataset) => Map<number, JsonObject[]>): Serve<readonly JsonObject[]> {
  return (ds, parentId) => {
    const orgId = parentId ?? -1;
    if (!ds.organizations.get(orgId)) return 'Organization not found.';
    return pick(ds).get(orgId) ?? [];
  };
}

export const streamServing: { readonly [N in StreamName]: StreamServing } = {
  programs: {
    shape: 'list',
    records: top((ds) => ds.programs.rows),
    filters: ['name', 'launched', 'active', 'open_datetime', 'close_datetime'],
  },
  applications: {
    shape: 'list',
    records: top((ds) => ds.applications.rows),
    filters: [
      'applicant',
      'average_score',
      'created_at',
      'current_stage',
      'overall_score',
      'program',
      'reference_id',
      'state',
      'title',
      'weighted_score',
    ],
    permissions: VIEW,
  },
  application_stages: { shape: 'list', records: ofApplication('stages') },
  application_tasks: { shape: 'list', records: ofApplication('tasks') },
  application_notes: { shape: 'list', records: ofApplication('notes') },
  assignments: {
    shape: 'list',
    records: top((ds) => ds.assignments),
    filters: ['application', 'program', 'reviewer', 'stage', 'updated_at'],
    permissions: ['Assign reviews'],
  },
  team_assignments: {
    shape: 'list',
    records: top((ds) => ds.teamAssignments),
    filters: ['application', 'program', 'team', 'stage', 'updated_at'],
    permissions: ['Assign reviews'],
  },
  custom_fields: {
    shape: 'list',
    records: top((ds) => ds.customFields.rows),
    filters: ['name', 'required', 'type'],
    permissions: ['Custom fields'],
  },
  financial_transactions: {
    shape: 'list',
    records: top((ds) => ds.transactions.rows),
    permissions: FIN,
    feature: 'financialManagement',
  },
  funds: {
    shape: 'list',
    records: top((ds) => ds.funds.rows),
    permissions: [...FIN, 'View/Edit Funds'],
    feature: 'financialManagement',
  },
  budgets: { shape: 'list', records: top((ds) => ds.budgets.rows), permissions: FIN, feature: 'financialManagement' },
  awards: { shape: 'list', records: top((ds) => ds.awards.rows), permissions: VIEW },
  payments: { shape: 'list', records: top((ds) => ds.payments.rows), permissions: ['Award Applications'] },
  organizations: { shape: 'list', records: top((ds) => ds.organizations.rows), permissions: ['View users'] },
  organization_members: { shape: 'list', records: ofOrganization((ds) => ds.members), permissions: ORG_ADMIN },
  organization_teams: { shape: 'list', records: ofOrganization((ds) => ds.teams), permissions: ORG_ADMIN },
  eligibility: {
    shape: 'object',
    record: (ds, parentId) => ds.eligibility.get(parentId ?? -1) ?? 'This organization has no eligibility responses.',
    permissions: ORG_ADMIN,
    feature: 'eligibility',
  },
  reports: {
    shape: 'list',
    records: top((ds) => ds.reports.rows),
    filters: ['created_by', 'last_generated_at', 'program', 'status', 'source', 'name', 'id'],
    permissions: ['Reports'],
  },
  report_downloads: {
    shape: 'download',
    file: (ds, parentId, config) => {
      const report = ds.reports.get(parentId ?? -1);
      if (!report) return 'Not found.';
      return reportFile(ds, report, config.hostile) ?? 'The report has not been generated.';
    },
    permissions: ['Reports'],
  },
  activity: {
    shape: 'list',
    records: top((ds) => ds.activity.rows),
    filters: ['actor', 'application', 'program', 'organization', 'category', 'created_at'],
    desc: true,
  },
  api_log: {
    shape: 'list',
    records: top((ds) => ds.log.rows),
    filters: ['actor', 'object_id', 'parent_id', 'role', 'status_code', 'timestamp', 'url'],
    desc: true,
  },
};

/** The router template of a stream path: `{parent}` becomes the `{id}` parameter (the counts are keyed by it). */
export function routeTemplate(path: string): string {
  return path.replace('{parent}', '{id}');
}

/** The built-in streams the site serves as records (lists and single objects; a download is a file). */
export const recordStreamNames: readonly StreamName[] = builtinStreams
  .map((s) => s.name)
  .filter((name) => streamServing[name].shape !== 'download');

export interface ServedRecord {
  /** The fan-out parent's id; absent for a top-level stream. */
  readonly parentId?: number;
  readonly record: JsonObject;
}

/**
 * Every record the site serves for a stream (in id order, as held), with its parent's id for a fan-out stream: the
 * parents are the records of the parent stream, or `parentIds` when given. A download stream serves files: none.
 */
export function servedRecords(
  ds: Dataset,
  name: StreamName,
  config: Readonly<SimConfig> = configFrom({}),
  parentIds?: readonly number[],
): ServedRecord[] {
  const serving = streamServing[name];
  if (serving.shape === 'download') return [];
  const parent = streamByName(name)?.parent?.stream as StreamName | undefined;
  const one = (parentId: number | undefined): ServedRecord[] => {
    const got = serving.shape === 'list' ? serving.records(ds, parentId, config) : serving.record(ds, parentId, config);
    if (typeof got === 'string') return [];
    const list: readonly JsonObject[] = Array.isArray(got) ? got : [got as JsonObject];
    return list.map((record) => (parentId === undefined ? { record } : { parentId, record }));
  };
  if (parent === undefined) return one(undefined);
  const ids = parentIds ?? servedRecords(ds, parent, config).map(({ record }) => record['id'] as number);
  return ids.flatMap(one);
}
