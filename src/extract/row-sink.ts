import type { JsonObject } from '../util/json.ts';

import type { LoadUnit } from '../warehouse/types.ts';

import type { DeletionHolds } from './deletion-holds.ts';

import { RowBatcher, type BatchContext, type RowBatch, type SinkCounts } from './row-batcher.ts';

export type { SinkCounts } from './row-batcher.ts';

/** A RowBatcher feeding one LoadUnit: rows stream into staging in bounded batches as records arrive. */
export class RowSink {
  private readonly batcher: RowBatcher;

  constructor(
    stream: string,
    private readonly unit: LoadUnit,
    context: BatchContext,
  ) {
    this.batcher = new RowBatcher(stream, context);
  }

  get counts(): SinkCounts {
    return this.batcher.counts;
  }

  /** What a complete walk's deletions must spare (see DeletionHolds). */
  holds(): DeletionHolds {
    return this.batcher.holds();
  }

  /** Parents with a quarantined child (see RowBatcher.parentsWithQuarantine). */
  parentsWithQuarantine(): ReadonlySet<number> {
    return this.batcher.parentsWithQuarantine();
  }

  async addRecords(records: readonly JsonObject[], parentId?: number): Promise<void> {
    await this.append(this.batcher.add(records, parentId));
  }

  async flush(): Promise<void> {
    await this.append(this.batcher.drain());
  }

  // Appends go to this unit's own staging (its own DuckDB connection, or a COPY on a pooled Postgres
  // connection), so they may overlap another unit's commit; only commits are serialised.
  private async append(batches: readonly RowBatch[]): Promise<void> {
    for (const b of batches) await this.unit.append(b.table, b.rows, b.merge);
  }
}
