import { standInItem, type JsonObject, type JsonValue } from '../util/json.ts';

import type { StagedMerge } from '../warehouse/types.ts';

import type { Row } from '../normalize/table-def.ts';

import {
  cutDeep,
  deeperThan,
  maxRecordDepth,
  QuarantineError,
  quarantineRow,
  TooDeepError,
  naiveTimestamps,
  untypedValues,
  type FieldObserver,
  type MappedRow,
} from '../normalize/index.ts';
import type { UnknownFields } from './unknown-fields.ts';

import { promotedValue, type Promotion } from '../normalize/promotions.ts';

import { HoldTracker, type DeletionHolds } from './deletion-holds.ts';

import { ReferenceDedup } from './reference-dedup.ts';
import type { StreamCatalog } from '../streams/catalog.ts';

/** A list item that is not a JSON object (see `standInRecord`): quarantined as it was sent. */
class NotAnObjectError extends QuarantineError {
  constructor(readonly item: JsonValue) {
    super(
      `the list item is not a JSON object but ${item === null ? 'null' : Array.isArray(item) ? 'an array' : `a ${typeof item}`}`,
    );
  }
}

/**
 * Rows are buffered until either bound is reached, then go out as batches: the row count bounds the per-row
 * overhead, the text size bounds memory when records are large (the source JSON kept in `_raw` dominates).
 */
const flushRows = 5_000;
const flushChars = 8_000_000;

export interface SinkCounts {
  records: number;
  rows: number;
  quarantined: number;
  /** Source values of loaded records that could not be typed: NULL in their column, kept in `_raw`. */
  untyped: number;
  /** Records that loaded without one of their lists (absent, null or of another shape): its rows were kept. */
  silent: number;
  /** Timestamps of loaded records that carried no zone, read in the site time zone. */
  naive: number;
}

/** Rows of one table and merge mode, ready for `LoadUnit.append`. */
export interface RowBatch {
  readonly table: string;
  readonly merge: StagedMerge;
  readonly rows: Row[];
}

export interface BatchContext {
  /** The streams the run knows: the mapping of each. */
  readonly catalog: StreamCatalog;
  readonly runId: string;
  readonly extractedAt: string;
  readonly siteTimeZone: string;
  /** The run's drift catalog, told each record's unmapped and retyped paths; none: not looked for. */
  readonly unknownFields?: UnknownFields;
  /** Columns of the `promote` setting: those of this stream are filled on its entity rows. */
  readonly promotions?: readonly Promotion[];
}

/**
 * Normalises records of one stream into rows, buffered per table and handed out in bounded batches. A record that
 * cannot be typed becomes a `_grantflow_quarantine` row with the reason; nothing is dropped silently. Knows nothing
 * of the warehouse, so it runs as well in a worker thread (replay) as next to the load unit (sync).
 */
export class RowBatcher {
  private readonly buffers = new Map<string, RowBatch>();
  private buffered = 0;
  private bufferedChars = 0;
  private readonly references: ReferenceDedup;
  private readonly holdTracker: HoldTracker;
  private readonly parentsQuarantined = new Set<number>();
  readonly counts: SinkCounts = { records: 0, rows: 0, quarantined: 0, untyped: 0, silent: 0, naive: 0 };

  constructor(
    private readonly stream: string,
    private readonly context: BatchContext,
  ) {
    this.holdTracker = new HoldTracker(context.catalog.mappingOf(stream).owns);
    this.references = new ReferenceDedup(context.catalog);
    this.fields = context.unknownFields?.observer(stream);
    this.promotions = (context.promotions ?? []).filter((p) => p.stream === stream);
  }

  private readonly fields: FieldObserver | undefined;
  private readonly promotions: readonly Promotion[];

  /** What the deletions of a complete walk over the records added so far must spare. */
  holds(): DeletionHolds {
    return this.holdTracker.holds();
  }

  /** Parents with a child record that was quarantined: their children were not all loaded. */
  parentsWithQuarantine(): ReadonlySet<number> {
    return this.parentsQuarantined;
  }

  /** Normalise `records`; returns batches once enough rows are buffered, else nothing. */
  add(records: readonly JsonObject[], parentId?: number): RowBatch[] {
    const mapping = this.context.catalog.mappingOf(this.stream);
    for (const record of records) {
      this.counts.records++;
      let mapped: MappedRow[];
      const untypedBefore = untypedValues.count;
      const naiveBefore = naiveTimestamps.count;
      try {
        const standIn = standInItem(record);
        if (standIn !== undefined) throw new NotAnObjectError(standIn.item);
        if (deeperThan(record, maxRecordDepth)) throw new TooDeepError(cutDeep(record));
        mapped = mapping.map(record, {
          parentId,
          siteTimeZone: this.context.siteTimeZone,
          ...(this.fields ? { fields: this.fields } : {}),
        });
        this.counts.untyped += untypedValues.count - untypedBefore;
        const own = mapped[0];
        if (own !== undefined && own.merge === 'replace')
          for (const p of this.promotions) if (own.table === p.table) own.row[p.column] = promotedValue(record, p);
        this.counts.naive += naiveTimestamps.count - naiveBefore;
        if (this.holdTracker.loaded(record, parentId)) this.counts.silent++;
      } catch (error) {
        if (!(error instanceof QuarantineError)) throw error;
        this.counts.quarantined++;
        this.holdTracker.quarantined(record, parentId);
        if (parentId !== undefined) this.parentsQuarantined.add(parentId);
        const payload =
          error instanceof NotAnObjectError ? error.item : error instanceof TooDeepError ? error.cut : record;
        const row = quarantineRow(this.stream, payload, error.message, this.context.runId, this.context.extractedAt);
        mapped = [{ table: '_grantflow_quarantine', row, merge: 'replace' }];
      }
      for (const m of mapped) {
        if (m.merge === 'coalesce' && !this.references.admit(m.table, m.row)) continue;
        this.push(m.table, m.merge, m.row);
      }
    }
    return this.buffered >= flushRows || this.bufferedChars >= flushChars ? this.drain() : [];
  }

  private push(table: string, merge: StagedMerge, row: Row): void {
    const key = `${table}\u0000${merge}`;
    let buffer = this.buffers.get(key);
    if (!buffer) this.buffers.set(key, (buffer = { table, merge, rows: [] }));
    buffer.rows.push(row);
    this.buffered++;
    this.bufferedChars += typeof row._raw === 'string' ? row._raw.length : 0;
    this.counts.rows++;
  }

  /** Every buffered row, as batches. */
  drain(): RowBatch[] {
    const batches = [...this.buffers.values()].filter((b) => b.rows.length > 0);
    this.buffers.clear();
    this.buffered = 0;
    this.bufferedChars = 0;
    return batches;
  }
}
