/** What the extraction is asked to generate before the reports list is read, and what came of it (report-refresh.ts). */

/** `refreshReports`: which reports to generate before they are listed, and how long to wait for them. */
export interface ReportRefreshOptions {
  /** Report ids, or `all`. */
  readonly reports: readonly string[];
  readonly timeoutSeconds: number;
  /** Between two rounds of status polls (the first round follows the jobs at once). */
  readonly pollSeconds?: number;
}

/** What the refresh did, for the summary. */
export interface ReportRefreshOutcome {
  readonly requested: number;
  readonly jobsCreated: number;
  readonly generated: number;
  /** Reports that did not reach status 3 (with why): their earlier file, if any, stays. */
  readonly notGenerated: readonly { readonly id: number; readonly why: string }[];
}
