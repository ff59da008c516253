import type { Credentials } from '../source/types.ts';
import type { JsonObject } from '../util/json.ts';
import type { TokenCounts, TokenStore } from './auth.ts';
import { applyChanges, type ChangeRequest, type ChangeResult } from './changes.ts';
import type { RequestCounter, RequestCounts } from './counts.ts';
import type { Dataset } from './dataset.ts';
import type { Drift, DriftReport } from './drift.ts';
import { addExtraList } from './extra-lists.ts';
import type { FaultInjector } from './faults.ts';
import type {
  FaultKind,
  FaultOptions,
  Features,
  LatencyOptions,
  ListStyle,
  PerPageOverMax,
  SimConfig,
} from './options.ts';
import { retryAfterSeconds } from './options.ts';
import type { SlidingWindowLimiter } from './rate-limit.ts';
import type { Router } from './router.ts';
import { servedTask, type AnswerShape } from './task-answers.ts';
import { reportFile, reportTable, type ReportFile, type ReportTable } from './report-files.ts';

/** Test-only levers over a running simulator (also reachable over HTTP under `/_sim/`, see docs/simulator.md). */
export interface SimulatorControl {
  /** The live data: what the API serves. Read it; change it only through the API or applyChanges. */
  readonly data: Dataset;
  /** Current run-time settings. */
  readonly config: Readonly<SimConfig>;
  /** Rows of a named collection (see `collectionNames`), e.g. `collection('tasks', { application: 3 })`. */
  collection(name: string, filter?: { application?: number; organization?: number }): JsonObject[];
  counts(): RequestCounts;
  resetCounts(): void;
  /** Token endpoint answers since start: `rotated` (refreshes that replaced a pair), else by error code. */
  tokenCounts(): TokenCounts;
  applyChanges(request: ChangeRequest): ChangeResult;
  setFaults(faults: FaultOptions): void;
  /** How many faults of each kind were injected since start. */
  faultsInjected(): Readonly<Record<FaultKind, number>>;
  /** Requests per second per client; 0 disables the limit. Also clears the current windows. */
  setRate(rate: number): void;
  /** `Retry-After` on 429s: true for 1 s, a number of seconds, or false for none. */
  setRetryAfter(setting: boolean | number): void;
  setLatency(latency: LatencyOptions): void;
  /** Lifetime of access tokens issued from now on. */
  setTokenTtl(seconds: number): void;
  /** The largest per_page honoured, and what a larger one gets (`cap`: pages of `n`; `reject`: a 400). */
  setPerPageMax(n: number, overMax?: PerPageOverMax): void;
  /** For one path template, or (without template) the default. */
  setListStyle(style: ListStyle, template?: string): void;
  setPermissions(permissions: readonly string[]): void;
  setFeatures(features: Partial<Features>): void;
  /** How task answers are served from now on (and returned by `collection('tasks')`). */
  setAnswerShape(shape: AnswerShape): void;
  /** Every token of every credential set stops working. */
  revokeAllCredentials(): void;
  /** A fresh set (the previous sets stop working unless keepExisting; sameClient keeps the client id and secret). */
  issueCredentials(options?: { keepExisting?: boolean; sameClient?: boolean }): Credentials;
  /** Access tokens expire now; refresh tokens still work. */
  expireAccessTokens(): void;
  /**
   * A report's contents and the file its download serves now; undefined unless it is generated (status 3).
   * `table` is what the CSV was written from, to compare a load with.
   */
  reportFile(id: number): { table: ReportTable; file: ReportFile } | undefined;
  /** Serve this file for the report's download instead of its CSV (null: the CSV again). */
  setReportFile(id: number, file: ReportFile | null): void;
  /** Schema drift on or off (see drift.ts); what it added so far stays recorded. */
  setDrift(on: boolean): void;
  /** What drift added to the answers served so far. */
  driftReport(): DriftReport;
  /**
   * Serves `rows` as a plain list at `path` (`/api/<name>/`): an endpoint the spec does not list, for a stream
   * registered at run time (option `extraLists`, extra-lists.ts). `rows` is read at each request, so a test may
   * change it. A path already served is refused.
   */
  addList(path: string, rows: readonly JsonObject[]): void;
}

export const collectionNames = [
  'users',
  'programs',
  'stages',
  'statuses',
  'applications',
  'application_stages',
  'tasks',
  'notes',
  'assignments',
  'team_assignments',
  'custom_fields',
  'financial_transactions',
  'funds',
  'budgets',
  'awards',
  'payments',
  'activity',
  'log',
  'organizations',
  'members',
  'teams',
  'eligibility',
  'reports',
] as const;

export interface ControlParts {
  readonly ds: Dataset;
  readonly config: SimConfig;
  readonly tokens: TokenStore;
  readonly counter: RequestCounter;
  readonly faults: FaultInjector;
  readonly limiter: SlidingWindowLimiter;
  readonly drift: Drift;
  readonly router: Router;
}

export function createControl(p: ControlParts): SimulatorControl {
  let changeCalls = 0;
  return {
    data: p.ds,
    config: p.config,
    collection: (name, filter = {}) => collection(p.ds, name, filter, p.config.answerShape),
    counts: () => p.counter.snapshot(),
    resetCounts: () => p.counter.reset(),
    tokenCounts: () => p.tokens.counts(),
    applyChanges: (request) => applyChanges(p.ds, request, ++changeCalls),
    setFaults: (faults) => {
      p.config.faults = faults;
      p.faults.configure(faults, p.ds.seed);
    },
    faultsInjected: () => ({ ...p.faults.injected }),
    setRate: (rate) => {
      p.config.rate = rate;
      p.limiter.rate = rate;
      p.limiter.reset();
    },
    setRetryAfter: (setting) => {
      p.config.retryAfterSeconds = retryAfterSeconds(setting);
    },
    setLatency: (latency) => {
      p.config.latency = latency;
    },
    setTokenTtl: (seconds) => {
      p.tokens.ttlSeconds = seconds;
    },
    setPerPageMax: (n, overMax) => {
      p.config.perPageMax = n;
      if (overMax) p.config.perPageOverMax = overMax;
    },
    setListStyle: (style, template) => {
      if (template) p.config.listStyleByEndpoint[template] = style;
      else p.config.listStyle = style;
    },
    setPermissions: (permissions) => {
      p.config.permissions = new Set(permissions);
    },
    setFeatures: (features) => {
      p.config.features = { ...p.config.features, ...features };
    },
    setAnswerShape: (shape) => {
      p.config.answerShape = shape;
    },
    revokeAllCredentials: () => p.tokens.revokeAll(),
    issueCredentials: (options) => p.tokens.issue(options?.keepExisting ?? false, options?.sameClient ?? false),
    expireAccessTokens: () => p.tokens.expireAccessTokens(),
    reportFile: (id) => {
      const report = p.ds.reports.get(id);
      const table = report ? reportTable(p.ds, report) : undefined;
      const file = report ? reportFile(p.ds, report) : undefined;
      return table && file ? { table, file } : undefined;
    },
    setReportFile: (id, file) => {
      if (file) p.ds.reportFileOverrides.set(id, file);
      else p.ds.reportFileOverrides.delete(id);
    },
    setDrift: (on) => {
      p.drift.enabled = on;
    },
    driftReport: () => p.drift.report(),
    addList: (path, rows) => addExtraList(p.router, path, rows),
  };
}

function collection(
  ds: Dataset,
  name: string,
  filter: { application?: number; organization?: number },
  answerShape: AnswerShape,
): JsonObject[] {
  const appIds =
    filter.application !== undefined ? [filter.application] : ds.applications.rows.map((a) => a['id'] as number);
  const orgIds =
    filter.organization !== undefined ? [filter.organization] : ds.organizations.rows.map((o) => o['id'] as number);
  const perApp = (kind: 'stages' | 'tasks' | 'notes'): JsonObject[] =>
    appIds.flatMap((id) => (ds.children(id)?.[kind] ?? []).map((row) => ({ application_id: id, ...row })));
  const perOrg = (map: Map<number, JsonObject[]>): JsonObject[] =>
    orgIds.flatMap((id) => (map.get(id) ?? []).map((row) => ({ organization_id: id, ...row })));
  switch (name) {
    case 'users':
      return [...ds.users.values()].map((u) => ({ ...u.ref, role: u.role }));
    case 'programs':
      return ds.programs.rows;
    case 'stages':
      return [...ds.stageDefs.values()].map((s) => ({
        id: s.id,
        title: s.title,
        program_id: s.programId,
        order: s.order,
        tasks: (ds.taskDefsByStage.get(s.id) ?? []).map((t) => ({ id: t.id, name: t.name, type: t.type })),
      }));
    case 'statuses':
      return ds.statuses;
    case 'applications':
      return ds.applications.rows;
    case 'application_stages':
      return perApp('stages');
    case 'tasks':
      // As the API serves them: answers in the configured shape.
      return perApp('tasks').map((t) => servedTask(t, answerShape));
    case 'notes':
      return perApp('notes');
    case 'assignments':
      return ds.assignments;
    case 'team_assignments':
      return ds.teamAssignments;
    case 'custom_fields':
      return ds.customFields.rows;
    case 'financial_transactions':
      return ds.transactions.rows;
    case 'funds':
      return ds.funds.rows;
    case 'budgets':
      return ds.budgets.rows;
    case 'awards':
      return ds.awards.rows;
    case 'payments':
      return ds.payments.rows;
    case 'activity':
      return ds.activity.rows;
    case 'log':
      return ds.log.rows;
    case 'organizations':
      return ds.organizations.rows;
    case 'members':
      return perOrg(ds.members);
    case 'teams':
      return perOrg(ds.teams);
    case 'eligibility':
      return orgIds.flatMap((id) => {
        const e = ds.eligibility.get(id);
        return e ? [{ organization_id: id, ...e }] : [];
      });
    case 'reports':
      return ds.reports.rows;
    default:
      throw new Error(`unknown collection "${name}"; known: ${collectionNames.join(', ')}`);
  }
}
