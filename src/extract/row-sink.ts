import type { JsonObject } from '../util/json.ts';
import type { LoadUnit, StagedMerge } from '../warehouse/types.ts';
import type { Row } from '../normalize/table-def.ts';
import { QuarantineError, quarantineRow, streamMappings, type MappedRow, type StreamName } from '../normalize/index.ts';
import { ReferenceDedup } from './reference-dedup.ts';

/** How many rows are buffered before they go to staging: bounds memory on the largest streams. */
const flushRows = 5_000;

export interface SinkCounts {
  records: number;
  rows: number;
  quarantined: number;
}

/**
 * Normalises records of one stream into rows and streams them into a LoadUnit in bounded batches. A record that
 * cannot be typed goes to `_grantflow_quarantine` with the reason; nothing is dropped silently.
 */
export class RowSink {
  private readonly buffers = new Map<string, { table: string; merge: StagedMerge; rows: Row[] }>();
  private buffered = 0;
  private readonly references = new ReferenceDedup();
  readonly counts: SinkCounts = { records: 0, rows: 0, quarantined: 0 };

  constructor(
    private readonly stream: StreamName,
    private readonly unit: LoadUnit,
    private readonly context: { runId: string; extractedAt: string; siteTimeZone: string },
  ) {}

  async addRecords(records: readonly JsonObject[], parentId?: number): Promise<void> {
    const mapping = streamMappings[this.stream];
    for (const record of records) {
      this.counts.records++;
      let mapped: MappedRow[];
      try {
        mapped = mapping.map(record, { parentId, siteTimeZone: this.context.siteTimeZone });
      } catch (error) {
        if (!(error instanceof QuarantineError)) throw error;
        this.counts.quarantined++;
        const row = quarantineRow(this.stream, record, error.message, this.context.runId, this.context.extractedAt);
        mapped = [{ table: '_grantflow_quarantine', row, merge: 'replace' }];
      }
      for (const m of mapped) {
        if (m.merge === 'coalesce' && !this.references.admit(m.table, m.row)) continue;
        this.push(m.table, m.merge, m.row);
      }
    }
    if (this.buffered >= flushRows) await this.flush();
  }

  private push(table: string, merge: StagedMerge, row: Row): void {
    const key = `${table}\u0000${merge}`;
    let buffer = this.buffers.get(key);
    if (!buffer) this.buffers.set(key, (buffer = { table, merge, rows: [] }));
    buffer.rows.push(row);
    this.buffered++;
    this.counts.rows++;
  }

  async flush(): Promise<void> {
    if (this.buffered === 0) return;
    const batches = [...this.buffers.values()].filter((b) => b.rows.length > 0);
    this.buffers.clear();
    this.buffered = 0;
    // Appends go to this unit's own staging (its own DuckDB connection, or a COPY on a pooled Postgres
    // connection), so they may overlap another unit's commit; only commits are serialised.
    for (const b of batches) await this.unit.append(b.table, b.rows, b.merge);
  }
}
