/**
 * The change marker of a report's download (the report_downloads stream's parent marker): what decides whether a
 * report's file is read again, and what the download needs of the report, carried in the mark.
 */
import type { JsonObject } from '../util/json.ts';

/**
 * What a report download is known by beyond its bytes: carried in the report's change marker (see
 * reportFileMarker), landed with the file, so a replay builds the same record.
 */
export interface ReportFileContext {
  readonly last_generated_at: string;
  /** The report's variables (2.19) when it was downloaded: header i came from variable i when the counts agree. */
  readonly columns: readonly string[];
}

/** The context a report's marker carries, or null when it has nothing to download (see reportFileMarker). */
export function reportFileContext(marker: string | null): ReportFileContext | null {
  if (marker === null) return null;
  const value = JSON.parse(marker) as Partial<ReportFileContext>;
  if (typeof value.last_generated_at !== 'string') return null;
  return {
    last_generated_at: value.last_generated_at,
    columns: Array.isArray(value.columns) ? value.columns.filter((c) => typeof c === 'string') : [],
  };
}

/**
 * A report's change marker for its download: null unless it is generated (status 3) with a `last_generated_at`
 * (other reports are listed, not downloaded); else what the download needs of the report, as JSON. Only
 * `last_generated_at` decides whether to download again (sameGeneration): an edit of the report's columns changes
 * no file until it is generated again, which moves `last_generated_at`.
 */
export function reportFileMarker(report: JsonObject): string | null {
  const when = report.last_generated_at;
  if (report.status !== 3 && report.status !== '3') return null;
  if (typeof when !== 'string' || when.trim() === '') return null;
  const columns = Array.isArray(report.columns) ? report.columns.filter((c) => typeof c === 'string') : [];
  return JSON.stringify({ last_generated_at: when, columns });
}

/** Whether a stored mark is of the same generation as the report's current marker. */
export function sameGeneration(stored: string | null, current: string | null): boolean {
  if (stored === current) return true;
  if (stored === null || current === null) return false;
  try {
    return reportFileContext(stored)?.last_generated_at === reportFileContext(current)?.last_generated_at;
  } catch {
    return false;
  }
}
