import type { JsonObject, JsonValue } from '../util/json.ts';
import { isJsonObject } from '../util/json.ts';
import type { Dataset } from './dataset.ts';
import { nowStamp } from './format.ts';
import { badRequest, notFound, ok, type Route } from './router.ts';

const reportsPermission = ['Reports'];

const intOf = (v: JsonValue | undefined): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;

/**
 * Report generation as the spec's download flow has it (4.12.4-6): a job queues the report (status 1); each status
 * poll moves it on, to 2 Generating and then 3 Generated with a new `last_generated_at`; the download (the
 * report_downloads stream's route, stream-serving.ts) then serves the new file. The shapes of these endpoints are not
 * shown in the spec (4.13): these are the simulator's.
 */
export const reportRoutes: readonly Route[] = [
  {
    method: 'POST',
    template: '/api/reportjobs/',
    permissions: reportsPermission,
    handler: (ctx) => {
      const body = isJsonObject(ctx.body) ? ctx.body : {};
      const id = intOf(body.report ?? body.report_id ?? body.id);
      if (id === undefined) return badRequest({ report: ['This field is required (the report id).'] });
      const report = ctx.ds.reports.get(id);
      if (!report) return badRequest({ report: [`Invalid pk "${id}" - object does not exist.`] });
      const format = body.data_format ?? body.format ?? 'csv';
      if (format !== 'csv') return badRequest({ data_format: [`"${String(format)}" is not a valid choice.`] });
      const jobId = `job-${id}-${++ctx.ds.version}`;
      Object.assign(report, { status: 1, job_id: jobId, row: 0, download_link: '', last_error_message: '' });
      return ok({ id: jobId, report: id, data_format: 'csv', status: 1 }, 201);
    },
  },
  {
    method: 'GET',
    template: '/api/reportstatuses/',
    permissions: reportsPermission,
    handler: (ctx) => {
      const raw = ctx.query.get('id');
      if (!raw || !/^\d+$/.test(raw))
        return badRequest({ id: ['This query parameter is required and must be an integer.'] });
      const r = ctx.ds.reports.get(Number(raw));
      if (!r) return notFound();
      advanceJob(ctx.ds, r);
      return ok({ id: r.id ?? 0, status: r.status ?? 0, row: r.row ?? 0, total_rows: r.total_rows ?? 0 });
    },
  },
];

/** One poll's worth of progress of a report's job: queued → generating → generated. */
function advanceJob(ds: Dataset, report: JsonObject): void {
  if (report.job_id === '' || report.job_id === undefined) return;
  const total = typeof report.total_rows === 'number' ? report.total_rows : 0;
  ds.version++;
  if (report.status === 1) {
    Object.assign(report, { status: 2, row: Math.floor(total / 2) });
    return;
  }
  if (report.status !== 2) return;
  // Later than the generation before, even within the same millisecond: the new file is a new generation.
  const before = Date.parse(String(report.last_generated_at ?? ''));
  const now = Date.parse(nowStamp());
  const at = new Date(Number.isFinite(before) && before >= now ? before + 1000 : now).toISOString();
  Object.assign(report, {
    status: 3,
    row: total,
    job_id: '',
    last_generated_at: at,
    download_link: `https://grants.example.org/reports/${String(report.id)}/download/`,
  });
}
