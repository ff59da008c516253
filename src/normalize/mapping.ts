import type { JsonObject } from '../util/json.ts';
import type { Cascade } from './cascade.ts';
import type { FieldObserver } from './field-observer.ts';
import type { CellValue, MergeMode, Row } from './table-def.ts';

export interface NormalizeContext {
  /** Id of the parent record for per-parent streams (application or organization id). */
  parentId?: number;
  /** IANA zone in which naive timestamps of the site are read. */
  siteTimeZone: string;
  /** Told every unmapped and retyped path of the record (the drift catalog of a run); optional, changes no row. */
  fields?: FieldObserver;
}

export interface MappedRow {
  table: string;
  row: Row;
  merge: MergeMode;
}

export interface OwnedScope {
  readonly table: string;
  readonly where?: Readonly<Record<string, CellValue>>;
  readonly parentColumn?: string;
  /**
   * Whole-table scopes: the column holding the record's own `id`, by which the rows of a record the walk saw but
   * could not use (quarantined, or `from` not an array) are kept live. Without it, such a record holds the scope.
   */
  readonly idColumn?: string;
  /**
   * The record key whose value gives these rows: a record where it is absent or of another shape says nothing of them.
   * `optional`: a key the spec does not list, so a record without it is not counted as silent (its rows are kept all
   * the same).
   */
  readonly from?: { readonly key: string; readonly shape: 'array' | 'object'; readonly optional?: boolean };
}

export interface StreamMapping {
  /**
   * Tables whose rows (in scope) come only from this stream: a complete scan soft-deletes rows it no longer
   * saw. For per-parent streams `parentColumn` names the column holding the parent id.
   */
  readonly owns: readonly OwnedScope[];
  /** When a row of this stream's entity table is soft-deleted, children in other streams' tables follow. */
  readonly cascades: readonly Cascade[];
  /** Rows of one record; throws QuarantineError when the record cannot be typed. */
  map(record: JsonObject, ctx: NormalizeContext): MappedRow[];
}
