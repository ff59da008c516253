import { createHash } from 'node:crypto';
import type { JsonObject } from '../util/json.ts';
import { canonicalJson } from '../normalize/quarantine.ts';

/**
 * One declarative entry per list endpoint (Airbyte-style): where it lives, how its records are keyed, whether it
 * fans out from a parent stream, and what a 403/404 means for it. The generic runner does the rest.
 */
export interface StreamDef {
  /** The stream's name: its raw files, its state and the tables it owns are known by it. */
  readonly name: string;
  /** Path of the list; `{parent}` is replaced by the parent record's id for fan-out streams. */
  readonly path: string;
  readonly description: string;
  /** De-duplication key of a record within one walk. */
  readonly keyOf: (record: JsonObject) => string;
  /** Fan-out: one walk per parent record; `marker` is the parent's change marker (new or moved → fetch again). */
  readonly parent?: {
    readonly stream: string;
    readonly marker: (parent: JsonObject) => string | null;
    /** Whether a stored mark still matches the current marker (default: equal). */
    readonly unchanged?: (stored: string | null, current: string | null) => boolean;
    /** A parent whose marker is null has nothing to read yet (a report not generated): neither read nor marked. */
    readonly idleWithoutMarker?: boolean;
  };
  /**
   * `list`: paginated list; `object`: one JSON object per parent (eligibility); `download`: one file per parent (a
   * report's generated file, see report-file.ts).
   */
  readonly shape: 'list' | 'object' | 'download';
  /**
   * The periodic full refresh (`fullRefreshAfterDays`) does not apply: the children change only when the parent's
   * marker moves (a report's file, with `last_generated_at`). `--full-refresh` still reads them all.
   */
  readonly refreshOnlyWhenAsked?: boolean;
  /**
   * `scan`: every run reads the whole list (complete scans soft-delete what vanished).
   * `append_newest_first`: an append-only log listed newest first; paging may stop at records already held.
   */
  readonly mode: 'scan' | 'append_newest_first';
  /** A status that means "not available here" (feature disabled, permission missing): skip with the reason. */
  readonly skipOn?: Readonly<Partial<Record<403 | 404, string>>>;
  /** For fan-out: a 404 for one parent means it has none of these (eligibility) rather than "parent gone". */
  readonly notFoundMeansEmpty?: boolean;
}

export const byId = (record: JsonObject): string => {
  const id = record.id;
  return typeof id === 'number' || typeof id === 'string' ? String(id) : JSON.stringify(record);
};

/** Key for records without an id: the ids of the references that make them unique. */
export const byRefs =
  (...fields: string[]) =>
  (record: JsonObject): string =>
    fields
      .map((f) => {
        const v = record[f];
        if (v && typeof v === 'object' && !Array.isArray(v) && 'id' in v) return String(v.id);
        return JSON.stringify(v ?? null);
      })
      .join('/');

/**
 * An application changes when its `updated_at` moves or anything else in its record does (child edits that touch
 * neither need a full refresh): `<updated_at>#<hash of the record>`. The hash catches a parent edited again within
 * the precision of the site's timestamps (a site sending seconds or dates, where `updated_at` may not move between
 * two edits a sync read between); keys sorted (`canonicalJson`), so a site that reorders them does not look changed.
 * Marks of older versions hold the bare `updated_at`; see `sameUpdatedAtMarker`.
 */
export const updatedAtMarker = (parent: JsonObject): string => {
  const updatedAt = typeof parent.updated_at === 'string' ? parent.updated_at : '';
  const hash = createHash('sha256').update(canonicalJson(parent)).digest('base64url').slice(0, 22);
  return `${updatedAt}${markerHashSeparator}${hash}`;
};

const markerHashSeparator = '#';

/**
 * Whether an application's stored mark still matches its current `updatedAtMarker`. A mark written before markers
 * carried a hash (the bare `updated_at`) matches a marker with the same `updated_at`, so upgrading grantflow does
 * not refetch every parent's children; the mark gains the hash when the parent is next read.
 */
export function sameUpdatedAtMarker(stored: string | null, current: string | null): boolean {
  if (stored === current) return true;
  if (stored === null || stored === '' || current === null || stored.includes(markerHashSeparator)) return false;
  return current.slice(0, current.lastIndexOf(markerHashSeparator)) === stored;
}

/** The parent of an application's fan-out streams: its marker and the comparison that marker needs, together. */
export const applicationParent = {
  stream: 'applications',
  marker: updatedAtMarker,
  unchanged: sameUpdatedAtMarker,
} as const satisfies StreamDef['parent'];

/** Organizations carry no timestamp: their whole record is the marker. */
export const contentMarker = (parent: JsonObject): string => JSON.stringify(parent);
