import type { CellValue, Row } from '../normalize/table-def.ts';
import type { RunRecord, Warehouse } from '../warehouse/types.ts';
import { runDataTests, type DataTestResult } from '../models/index.ts';
import { ConfigError } from '../util/errors.ts';
import { deidentifyRows, type PersonalDataPolicy } from '../privacy/deidentify-rows.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../util/json.ts';

/** The model tables the report shows, each read whole in this order (the order of their tables in the report). */
export const reportModels = {
  funding_flow: 'fund_id, program_id',
  fund_utilization: 'fund_id',
  award_rates: 'program_id',
  award_rates_by_year: 'program_id, decision_year',
  decision_latency: 'program_id',
  reviewer_load: 'reviewer_id, program_id, stage_id',
  review_progress: 'program_id, stage_id',
  application_funnel: 'program_id, stage_order, stage_id',
  stage_aging: 'program_id, stage_id, state',
} as const;
export type ReportModel = keyof typeof reportModels;

export interface StreamState {
  readonly stream: string;
  readonly lastCompleteAt: string | null;
  readonly lastCompleteRunId: string | null;
  readonly records: number | null;
  readonly lastFullRefreshAt: string | null;
}

export interface QuarantineGroup {
  readonly stream: string;
  readonly reason: string;
  readonly records: number;
}

/** Everything the report shows, read from the warehouse once, before any page is written. */
export interface ReportData {
  readonly builtAt: string;
  readonly warehouse: string;
  readonly site: string | null;
  /** Rows of each model; null when its table is not built (a sync with models off, or a model that failed). */
  readonly models: Readonly<Record<ReportModel, Row[] | null>>;
  /** Newest first. */
  readonly runs: readonly RunRecord[];
  /** A run still `running` while no sync holds the lock: it was killed. */
  readonly runningDied: boolean;
  readonly streams: readonly StreamState[];
  readonly quarantine: readonly QuarantineGroup[];
  readonly quarantined: number;
  /** Every data test run now against the warehouse as it is (a test whose query fails says so, never throws). */
  readonly tests: readonly DataTestResult[];
}

const missingTable = (e: unknown): boolean => /does not exist/i.test(e instanceof Error ? e.message : String(e));

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Reads what the report needs. A warehouse no sync has written to is a ConfigError, as for `status`. */
export interface ReadOptions {
  /** Runs listed (default 10). */
  readonly runs?: number;
  /** The caller holds the warehouse's run lock (`grantflow report`, a sync): a run still `running` was killed. */
  readonly holdsRunLock?: boolean;
  /** What the pages may show of personal data (the `personalData` setting); absent: everything. */
  readonly personalData?: PersonalDataPolicy;
}

export async function readReportData(warehouse: Warehouse, options: ReadOptions = {}): Promise<ReportData> {
  const builtAt = new Date().toISOString();
  let runs: RunRecord[];
  try {
    runs = await warehouse.listRuns(options.runs ?? 10);
  } catch (e) {
    if (!missingTable(e)) throw e;
    throw new ConfigError(`${warehouse.description} holds no grantflow data yet; run \`grantflow sync\` first`);
  }
  const models = {} as Record<ReportModel, Row[] | null>;
  // One numbering of users for every model of the report (deidentifyRows, under `drop`).
  const ordinals = new Map<string, number>();
  for (const [name, order] of Object.entries(reportModels) as [ReportModel, string][]) {
    try {
      const rows = await warehouse.query(`SELECT * FROM ${warehouse.qualifyModel(name)} ORDER BY ${order}`);
      models[name] = deidentifyRows(name, rows, options.personalData, ordinals);
    } catch (e) {
      if (!missingTable(e)) throw e;
      models[name] = null;
    }
  }
  const running = runs.some((r) => r.status === 'running');
  const runningDied = running && (options.holdsRunLock === true || !(await warehouse.runLockHeld()));
  const streams = (
    await warehouse.query(`SELECT stream, state FROM ${warehouse.qualify('_grantflow_streams')} ORDER BY stream`)
  ).map((r): StreamState => {
    const state = parseJson(r.state ?? null);
    return {
      stream: String(r.stream),
      lastCompleteAt: str(state.lastCompleteAt),
      lastCompleteRunId: str(state.lastCompleteRunId),
      records: typeof state.records === 'number' ? state.records : null,
      lastFullRefreshAt: str(state.lastFullRefreshAt),
    };
  });
  const quarantine = (
    await warehouse.query(
      `SELECT stream, reason, count(*) AS records FROM ${warehouse.qualify('_grantflow_quarantine')} ` +
        'GROUP BY stream, reason ORDER BY stream, count(*) DESC, reason',
    )
  ).map((r) => ({
    stream: String(r.stream),
    reason: reasonShown(String(r.reason), options.personalData),
    records: Number(r.records),
  }));
  const tests = await runDataTests(warehouse, { sampleSize: 0 });
  return {
    builtAt,
    warehouse: warehouse.description,
    site: siteOf(runs),
    models,
    runs,
    runningDied,
    streams,
    quarantine,
    quarantined: quarantine.reduce((a, q) => a + q.records, 0),
    tests,
  };
}

function parseJson(value: CellValue): JsonObject {
  if (typeof value !== 'string') return {};
  try {
    const parsed = JSON.parse(value) as JsonValue;
    return isJsonObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** The site the warehouse holds, as its newest run names it. */
function siteOf(runs: readonly RunRecord[]): string | null {
  for (const r of runs) if (isJsonObject(r.summary) && typeof r.summary.site === 'string') return r.summary.site;
  return null;
}

/** The newest run that reached its end and recorded its streams (not one still running or killed early). */
export function lastFinishedRun(runs: readonly RunRecord[]): RunRecord | null {
  return runs.find((r) => isJsonObject(r.summary) && Array.isArray(r.summary.streams)) ?? null;
}

/** A run's per-stream entries from its summary. */
export function runStreams(run: RunRecord | null): JsonObject[] {
  if (!run || !isJsonObject(run.summary) || !Array.isArray(run.summary.streams)) return [];
  return run.summary.streams.filter(isJsonObject);
}

/**
 * A quarantine reason as the report shows it: a reason may quote the value it could not read (`... (\"...\")`),
 * which may be a person's name or answer, so under a personalData other than keep only the words before it are shown.
 */
function reasonShown(reason: string, policy: PersonalDataPolicy | undefined): string {
  if (policy === undefined || policy.mode === 'keep') return reason;
  const quote = reason.search(/\s\(|:\s*["{[]/);
  return quote === -1 ? reason : `${reason.slice(0, quote)} (value not shown)`;
}
