import type { Credentials } from '../credentials/types.ts';
import type { JsonObject } from '../util/json.ts';
import type { TokenCounts, TokenStore } from './auth.ts';
import { applyChanges, type ChangeRequest, type ChangeResult } from './changes.ts';
import type { RequestCounter, RequestCounts } from './counts.ts';
import type { Dataset, ReportFile } from './dataset.ts';
import type { Drift, DriftReport } from './drift.ts';
import type { FaultInjector } from './faults.ts';
import type {
  ExtraListRows,
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
import type { AnswerShape } from './task-answers.ts';
import type { HostileOptions } from './hostile.ts';
import { streamByName, type StreamName } from '../streams/registry.ts';
import { extraListRoute } from './read-routes.ts';
import type { Router } from './router.ts';
import { recordStreamNames, servedRecords } from './stream-serving.ts';
import { reportFile, reportTable, type ReportTable } from './report-files.ts';

/** Test-only levers over a running simulator (also reachable over HTTP under `/_sim/`, see docs/simulator.md). */
export interface SimulatorControl {
  /** The live data: what the API serves. Read it; change it only through the API or applyChanges. */
  readonly data: Dataset;
  /** Current run-time settings. */
  readonly config: Readonly<SimConfig>;
  /**
   * Rows of a named collection (see `collectionNames`: every stream the site serves as records, by its name, and the
   * users, stages and statuses), e.g. `collection('application_tasks', { application: 3 })`.
   */
  collection(name: string, filter?: { application?: number; organization?: number }): JsonObject[];
  /**
   * Serves a list beside the built-in streams, for a stream a test adds in a catalog of its own (`buildStreamCatalog`):
   * at `path` as the stream declares it (`{parent}` for a fan-out list), `rows` read at each request (so a test may
   * change them), or per parent id (undefined: 404). Paginated, styled, counted and faulted like every list; no filters.
   */
  addList(path: string, rows: ExtraListRows): void;
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
  /** How task answers are served from now on (and returned by `collection('application_tasks')`). */
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
  /** Hostile behaviour from now on (see hostile.ts); `{}` for none. */
  setHostile(hostile: HostileOptions): void;
}

/** Collections that are not streams: the users every record names, the programs' stage definitions, the statuses. */
const siteCollections = ['users', 'stages', 'statuses'] as const;

/** Names `collection` knows: each built-in stream served as records (by its registry name), then the others. */
export const collectionNames: readonly string[] = [...recordStreamNames, ...siteCollections];

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
    collection: (name, filter = {}) => collection(p.ds, name, filter, p.config),
    addList: (path, rows) => p.router.add(extraListRoute(path, rows)),
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
      const table = report ? reportTable(p.ds, report, p.config.hostile) : undefined;
      const file = report ? reportFile(p.ds, report, p.config.hostile) : undefined;
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
    setHostile: (hostile) => {
      p.config.hostile = { ...hostile };
    },
  };
}

function collection(
  ds: Dataset,
  name: string,
  filter: { application?: number; organization?: number },
  config: Readonly<SimConfig>,
): JsonObject[] {
  if (isRecordStream(name)) {
    // A fan-out stream's records carry their parent's id as `<parent>_id` (`application_id`, `organization_id`).
    const parent = streamByName(name)?.parent?.stream.replace(/s$/, '');
    const wanted =
      parent === 'application' ? filter.application : parent === 'organization' ? filter.organization : undefined;
    return servedRecords(ds, name, config, wanted === undefined ? undefined : [wanted]).map(({ parentId, record }) =>
      parentId === undefined ? record : { [`${parent ?? ''}_id`]: parentId, ...record },
    );
  }
  switch (name) {
    case 'users':
      return [...ds.users.values()].map((u) => ({ ...u.ref, role: u.role }));
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
    default:
      throw new Error(`unknown collection "${name}"; known: ${collectionNames.join(', ')}`);
  }
}

function isRecordStream(name: string): name is StreamName {
  return (recordStreamNames as readonly string[]).includes(name);
}
