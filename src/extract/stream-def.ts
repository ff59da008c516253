import type { JsonObject } from '../util/json.ts';
import type { StreamName } from '../normalize/index.ts';

/**
 * One declarative entry per list endpoint (Airbyte-style): where it lives, how its records are keyed, whether it
 * fans out from a parent stream, and what a 403/404 means for it. The generic runner does the rest.
 */
export interface StreamDef {
  /** One of the normalizer's stream names: the compiler ties each endpoint to its mapping. */
  readonly name: StreamName;
  /** Path of the list; `{parent}` is replaced by the parent record's id for fan-out streams. */
  readonly path: string;
  readonly description: string;
  /** De-duplication key of a record within one walk. */
  readonly keyOf: (record: JsonObject) => string;
  /** Fan-out: one walk per parent record; `marker` is the parent's change marker (new or moved → fetch again). */
  readonly parent?: {
    readonly stream: StreamName;
    readonly marker: (parent: JsonObject) => string | null;
  };
  /** `list`: paginated list; `object`: one JSON object per parent (eligibility). */
  readonly shape: 'list' | 'object';
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

/** An application changes when its `updated_at` moves (child edits that do not touch it need a full refresh). */
export const updatedAtMarker = (parent: JsonObject): string | null =>
  typeof parent.updated_at === 'string' ? parent.updated_at : null;

/** Organizations carry no timestamp: their whole record is the marker. */
export const contentMarker = (parent: JsonObject): string => JSON.stringify(parent);
