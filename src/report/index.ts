/** The report: a static site of charts and tables built from the warehouse (see docs/report.md). */
export { writeReport, renderReport, type ReportResult } from './write-report.ts';
export { readReportData, reportModels, type ReportData, type ReportModel } from './report-data.ts';
export { reportAfterSync } from './after-sync.ts';
