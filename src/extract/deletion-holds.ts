import type { OwnedScope } from '../normalize/mapping.ts';
import { optId } from '../normalize/coerce.ts';
import type { JsonObject, JsonValue } from '../util/json.ts';

/** The value a held row is found by: a record's own id, or for a per-parent scope its parent's id. */
export type HeldKey = string | number | bigint;

/**
 * What a complete walk must not soft-delete although it staged nothing for it: rows of records it saw but could not
 * load (quarantined), and rows a record's value said nothing about (an array key absent, null or of another shape).
 * Plain data, so it crosses from the replay's normalising worker as it is.
 */
export interface DeletionHolds {
  /** A record without a usable key could not be loaded: it may stand for any held row, so the walk deletes nothing. */
  readonly everything: boolean;
  /** Per scope of the stream's `owns` (same order): keys whose rows in that scope stay live. */
  readonly keys: readonly (readonly HeldKey[])[];
}

export const noHolds: DeletionHolds = { everything: false, keys: [] };

/** Collects the holds of one stream's records, as the normaliser meets them. */
export class HoldTracker {
  private everything = false;
  private readonly keys: Set<HeldKey>[];

  constructor(private readonly owns: readonly OwnedScope[]) {
    this.keys = owns.map(() => new Set<HeldKey>());
  }

  /**
   * A record that loaded: scopes whose source value it did not send as expected keep its rows. True when there
   * was such a scope (the record was silent about some of its rows).
   */
  loaded(record: JsonObject, parentId: number | undefined): boolean {
    const silent = this.owns.filter((s) => s.from !== undefined && !hasShape(record[s.from.key], s.from.shape));
    for (const scope of silent) this.hold(scope, record, parentId);
    return silent.some((s) => s.from?.optional !== true);
  }

  /** A record that was quarantined: every scope keeps its rows. */
  quarantined(record: JsonObject, parentId: number | undefined): void {
    for (const scope of this.owns) this.hold(scope, record, parentId);
  }

  holds(): DeletionHolds {
    return { everything: this.everything, keys: this.keys.map((k) => [...k]) };
  }

  private hold(scope: OwnedScope, record: JsonObject, parentId: number | undefined): void {
    const key = scope.parentColumn !== undefined ? parentId : scope.idColumn !== undefined ? recordId(record) : null;
    if (key === null || key === undefined) this.everything = true;
    else this.keys[this.owns.indexOf(scope)]!.add(key);
  }
}

function recordId(record: JsonObject): HeldKey | null {
  try {
    return optId(record.id, 'id');
  } catch {
    return null; // an id that cannot be read names no row
  }
}

function hasShape(v: JsonValue | undefined, shape: 'array' | 'object'): boolean {
  return shape === 'array' ? Array.isArray(v) : typeof v === 'object' && v !== null && !Array.isArray(v);
}
