import { sleep } from '../source/retry.ts';
import { CredentialsError, StoppedError } from '../util/errors.ts';
import { isJsonObject } from '../util/json.ts';
import { readStreamState } from './state.ts';
import type { ExtractContext } from './types.ts';
import type { ReportRefreshOptions, ReportRefreshOutcome } from './report-refresh-types.ts';

/** The extraction's option from the settings: none unless `refreshReports` names reports. */
export function reportRefreshOption(settings: {
  readonly refreshReports: readonly string[];
  readonly refreshReportsTimeout: number;
}): { refreshReports?: ReportRefreshOptions } {
  if (settings.refreshReports.length === 0) return {};
  return { refreshReports: { reports: settings.refreshReports, timeoutSeconds: settings.refreshReportsTimeout } };
}

/** Status values of a report (spec 2.18). */
const generatedStatus = 3;
const endedStatuses: Readonly<Record<number, string>> = { 4: 'generation failed (status 4 Error)', 5: 'canceled' };

/**
 * Creates a report job for each chosen report (spec 4.12.4) and polls its status (4.12.5) until it is generated,
 * fails, or the time limit passes; every request goes through the run's client (its rate limit, auth and retries).
 * Run before the reports list is read, so the list shows the new `last_generated_at` and report_downloads fetches
 * the new files. Writes to the site, hence opt-in. Skipped when this run (resumed) already committed the list.
 * Never fails the stream: what could not be generated is reported and the sync goes on with what the site has.
 */
export async function refreshReports(
  ctx: ExtractContext,
  options: ReportRefreshOptions,
): Promise<ReportRefreshOutcome | null> {
  if (ctx.resuming && (await readStreamState(ctx, 'reports')).lastCompleteRunId === ctx.runId) return null;
  const signal = ctx.stop?.signal;
  const notGenerated: { id: number; why: string }[] = [];
  let ids: number[];
  try {
    ids = await chosenReports(ctx, options.reports);
  } catch (error) {
    rethrowFatal(error);
    ctx.logger.warn({ err: message(error) }, 'report refresh: could not list the reports to generate');
    return { requested: 0, jobsCreated: 0, generated: 0, notGenerated: [{ id: 0, why: message(error) }] };
  }
  const pending = new Set<number>();
  for (const id of ids) {
    try {
      await ctx.client.postJson('/api/reportjobs/', { report: id, data_format: 'csv' });
      pending.add(id);
    } catch (error) {
      rethrowFatal(error);
      notGenerated.push({ id, why: `job not created: ${message(error)}` });
    }
  }
  const jobsCreated = pending.size;
  const deadline = Date.now() + options.timeoutSeconds * 1000;
  let generated = 0;
  for (let round = 0; pending.size > 0; round++) {
    if (round > 0) {
      const wait = Math.min((options.pollSeconds ?? 2) * 1000, deadline - Date.now());
      if (wait > 0) await sleep(wait, signal);
    }
    if (Date.now() >= deadline) break;
    for (const id of [...pending]) {
      let status: number | null;
      try {
        const res = await ctx.client.getJson('/api/reportstatuses/', { id });
        status = isJsonObject(res.body) && typeof res.body.status === 'number' ? res.body.status : null;
      } catch (error) {
        rethrowFatal(error);
        pending.delete(id);
        notGenerated.push({ id, why: `status not read: ${message(error)}` });
        continue;
      }
      const ended = status === null ? undefined : endedStatuses[status];
      if (status === generatedStatus) {
        pending.delete(id);
        generated++;
      } else if (ended) {
        pending.delete(id);
        notGenerated.push({ id, why: ended });
      }
    }
  }
  for (const id of pending)
    notGenerated.push({ id, why: `not generated within ${options.timeoutSeconds} s (refreshReportsTimeout)` });
  for (const { id, why } of notGenerated) ctx.logger.warn({ report: id, why }, 'report refresh: not generated');
  ctx.logger.info({ requested: ids.length, generated }, 'report refresh done');
  return { requested: ids.length, jobsCreated, generated, notGenerated };
}

async function chosenReports(ctx: ExtractContext, chosen: readonly string[]): Promise<number[]> {
  const ids = new Set(chosen.filter((c) => c !== 'all').map(Number));
  if (chosen.includes('all')) {
    const pages = ctx.client.paginate('/api/reports/');
    for (let step = await pages.next(); !step.done; step = await pages.next())
      for (const r of step.value.records) if (typeof r.id === 'number') ids.add(r.id);
  }
  return [...ids].sort((a, b) => a - b);
}

/** Errors that end the run (credentials refused, the run stopping) are not one report's trouble. */
function rethrowFatal(error: unknown): void {
  if (error instanceof CredentialsError || error instanceof StoppedError) throw error;
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The summary's note of a refresh. */
export function refreshNote(outcome: ReportRefreshOutcome): string {
  const base = `report jobs: ${outcome.generated}/${outcome.requested} generated`;
  if (outcome.notGenerated.length === 0) return base;
  const first = outcome.notGenerated[0]!;
  return `${base}; WARNING ${outcome.notGenerated.length} not (report ${first.id}: ${first.why})`;
}
