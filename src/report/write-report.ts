import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Warehouse } from '../warehouse/types.ts';
import { oneLine } from '../source/errors.ts';
import { formatTime } from './format.ts';
import type { PageContext } from './html.ts';
import { awardsPage } from './pages/awards.ts';
import { dataHealthPage, runStatus, runWhy } from './pages/data-health.ts';
import { dictionaryPage } from './pages/dictionary.ts';
import { fundingPage } from './pages/funding.ts';
import { overviewPage } from './pages/overview.ts';
import { pipelinePage } from './pages/pipeline.ts';
import { reviewsPage } from './pages/reviews.ts';
import { readReportData, type ReadOptions, type ReportData } from './report-data.ts';

export interface ReportResult {
  /** Absolute path of the report's front page. */
  readonly index: string;
  readonly files: readonly string[];
  readonly durationMs: number;
}

/** What every page says at its top when the newest run did not succeed. */
function lastRunWarning(data: ReportData): string | null {
  const last = data.runs[0];
  if (!last || last.status === 'succeeded') return null;
  if (last.status === 'running' && !data.runningDied)
    return `A sync (run ${last.runId}) is running now: these figures are from before it.`;
  // Shortened as `status` does; Data health lists it whole.
  const why = oneLine(runWhy(last, data), 300);
  return (
    `The last run, ${last.runId} (started ${formatTime(last.startedAt)}), ${runStatus(last, data)}${why ? `: ${why}` : ''}. ` +
    'The figures show what the warehouse holds: what earlier runs loaded, and what this one committed before it stopped.'
  );
}

/** Every page of the report as [file name, HTML], rendered in memory. */
export async function renderReport(data: ReportData): Promise<[string, string][]> {
  const ctx: PageContext = {
    site: data.site,
    builtAt: data.builtAt,
    warehouse: data.warehouse,
    warning: lastRunWarning(data),
  };
  return [
    ['index.html', overviewPage(data, ctx)],
    ['funding.html', await fundingPage(data, ctx)],
    ['awards.html', await awardsPage(data, ctx)],
    ['reviews.html', await reviewsPage(data, ctx)],
    ['pipeline.html', await pipelinePage(data, ctx)],
    ['data-health.html', await dataHealthPage(data, ctx)],
    ['dictionary.html', dictionaryPage(ctx)],
  ];
}

/**
 * Reads the warehouse and writes the report's pages into `dir`. Every page is rendered before the first is written,
 * so a read or a chart that fails leaves the previous report as it was; each page then replaces its old version by
 * a rename, so a reader never opens a half-written page.
 */
export async function writeReport(warehouse: Warehouse, dir: string, options: ReadOptions = {}): Promise<ReportResult> {
  const started = performance.now();
  const files = await renderReport(await readReportData(warehouse, options));
  const out = resolve(dir);
  await mkdir(out, { recursive: true });
  const written: string[] = [];
  for (const [name, html] of files) {
    const target = join(out, name);
    const temp = join(out, `.${name}.${process.pid}.tmp`);
    try {
      await writeFile(temp, html);
      await rename(temp, target);
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
    written.push(target);
  }
  return { index: join(out, 'index.html'), files: written, durationMs: performance.now() - started };
}
