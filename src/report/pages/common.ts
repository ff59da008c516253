import type { Row } from '../../normalize/table-def.ts';
import { empty } from '../html.ts';
import { nameOr } from '../format.ts';
import { lastFinishedRun, runStreams, type ReportData, type ReportModel } from '../report-data.ts';

/** Where a model's table is missing: what, and how to get it. */
export function modelMissing(name: ReportModel): string {
  return empty(
    `model-${name}`,
    `The ${name} model is not built.`,
    ' Its table is not in the warehouse: the syncs so far ran with models off (--models false), or the model failed ' +
      '(Data health shows the last runs). `grantflow models run` builds it.',
  );
}

/** Program names by id, from the models that carry them (review and funnel rows name only the id). */
export function programNames(data: ReportData): Map<string, string> {
  const names = new Map<string, string>();
  for (const r of [...(data.models.award_rates ?? []), ...(data.models.decision_latency ?? [])])
    names.set(String(r.program_id), nameOr(r.program_name ?? null, 'program', r.program_id ?? null));
  return names;
}

export const programName = (names: Map<string, string>, id: Row[string] | undefined): string =>
  names.get(String(id)) ?? nameOr(null, 'program', id ?? null);

const financeStreams = ['funds', 'financial_transactions', 'budgets', 'payments'];

const fundMoney = ['deposits', 'withdrawals', 'transferred', 'received', 'allocated', 'paid'];

/**
 * Whether the warehouse holds any finance data: a fund-to-program flow, or a fund with a balance or money moved. A
 * fund known only from a program's reference (finance off on the site) has neither, only its name.
 */
export function hasFinanceData(data: ReportData): boolean {
  if ((data.models.funding_flow ?? []).length > 0) return true;
  return (data.models.fund_utilization ?? []).some(
    (r) => r.balance !== null || fundMoney.some((c) => r[c] !== null && Number(r[c]) !== 0),
  );
}

/**
 * Why the warehouse holds no finance rows, from the last finished run: the site refused the finance streams (its
 * financial management feature is off, or the credentials may not read it), they failed, or they read nothing.
 */
export function financeMissingWhy(data: ReportData): string {
  const run = lastFinishedRun(data.runs);
  const streams = runStreams(run).filter((s) => financeStreams.includes(String(s.stream)));
  const skipped = streams.filter((s) => s.status === 'skipped');
  if (skipped.length > 0) {
    const reason = typeof skipped[0]?.reason === 'string' ? `: ${skipped[0].reason}` : '';
    return (
      ` The site did not give the finance streams to grantflow (${skipped.map((s) => String(s.stream)).join(', ')} ` +
      `skipped in run ${run?.runId ?? '?'}${reason}). Financial management may be off on the site, or the API ` +
      'credentials may lack the permission to read it.'
    );
  }
  const failed = streams.filter((s) => s.status === 'failed');
  if (failed.length > 0)
    return ` The finance streams failed in run ${run?.runId ?? '?'} (${failed.map((s) => String(s.stream)).join(', ')}); Data health has why.`;
  if (!run) return ' No sync has finished yet, so nothing has been read from the site.';
  return ` The site has no funds, budgets or financial transactions (read in run ${run.runId}).`;
}
