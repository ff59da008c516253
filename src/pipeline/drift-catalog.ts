import type { DriftOverflow, UnknownFieldSeen } from '../extract/unknown-fields.ts';
import type { UnknownFieldRow } from '../warehouse/unknown-field-row.ts';
import type { Warehouse } from '../warehouse/types.ts';
import { firstLine } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';

/** What a run's drift came to, for its summary. */
export interface DriftSummary {
  /** Unmapped paths this run saw that no earlier run had. */
  readonly newPaths: number;
  /** Unmapped paths this run saw. */
  readonly unmapped: number;
  /** Mapped paths this run saw holding another JSON type. */
  readonly retyped: number;
  /** Drift left out of the catalog by its bounds (see unknown-fields.ts); absent when none was. */
  readonly overflow?: DriftOverflow;
}

/**
 * Paths a stream's stored catalog holds at most: each run adds at most `maxPathsPerStream`, so without this bound a
 * site inventing names on every run would still grow the table (and what each run reads of it) run after run.
 */
export const maxStoredPathsPerStream = 10_000;

/** Catalog rows after a run: what it saw merged into what was stored (types joined, records added up). */
export function mergeUnknownFields(
  stored: readonly UnknownFieldRow[],
  seen: readonly UnknownFieldSeen[],
  runId: string,
  at: string,
): { rows: UnknownFieldRow[]; newPaths: number; overflow?: DriftOverflow } {
  const byKey = new Map(stored.map((r) => [`${r.stream}\u0000${r.path}`, r]));
  const held = new Map<string, number>();
  for (const r of stored) held.set(r.stream, (held.get(r.stream) ?? 0) + 1);
  let newPaths = 0;
  let overflowRecords = 0;
  const overflowStreams = new Set<string>();
  const kept = seen.filter((s) => {
    if (byKey.has(`${s.stream}\u0000${s.path}`)) return true;
    const n = held.get(s.stream) ?? 0;
    if (n < maxStoredPathsPerStream) return held.set(s.stream, n + 1);
    overflowRecords += s.records;
    overflowStreams.add(s.stream);
    return false;
  });
  const rows = kept.map((s): UnknownFieldRow => {
    const old = byKey.get(`${s.stream}\u0000${s.path}`);
    if (old === undefined && s.kind === 'unmapped') newPaths++;
    const types = new Set([...(old?.json_types.split(',') ?? []), ...s.types]);
    return {
      stream: s.stream,
      path: s.path,
      kind: s.kind,
      json_types: [...types].sort().join(','),
      records_seen: (old?.records_seen ?? 0) + s.records,
      example: old?.example ?? s.example,
      first_run_id: old?.first_run_id ?? runId,
      last_run_id: runId,
      first_seen_at: old?.first_seen_at ?? at,
      last_seen_at: at,
    };
  });
  const overflow =
    overflowStreams.size > 0 ? { records: overflowRecords, streams: [...overflowStreams].sort() } : undefined;
  return { rows, newPaths, ...(overflow ? { overflow } : {}) };
}

/** Two accounts of drift left out, as one. */
export function joinOverflow(a: DriftOverflow | undefined, b: DriftOverflow | undefined): DriftOverflow | undefined {
  if (!a || !b) return a ?? b;
  return { records: a.records + b.records, streams: [...new Set([...a.streams, ...b.streams])].sort() };
}

/**
 * Stores what the run saw in `_grantflow_unknown_fields`. Drift never fails a run: a write that fails is logged and
 * the run goes on without its drift summary.
 */
export async function recordDrift(
  warehouse: Warehouse,
  catalog: { list(): UnknownFieldSeen[]; overflow(): DriftOverflow | undefined },
  runId: string,
  logger: Logger,
): Promise<DriftSummary | undefined> {
  const seen = catalog.list();
  const unmapped = seen.filter((s) => s.kind === 'unmapped').length;
  const retyped = seen.length - unmapped;
  const runOverflow = catalog.overflow();
  const said = (overflow: DriftOverflow | undefined): { overflow?: DriftOverflow } => {
    if (overflow)
      logger.warn(
        { records: overflow.records, streams: overflow.streams },
        'records held more unmapped fields than the drift catalog keeps; those were not catalogued',
      );
    return overflow ? { overflow } : {};
  };
  if (seen.length === 0) return { newPaths: 0, unmapped, retyped, ...said(runOverflow) };
  try {
    const { rows, newPaths, overflow } = mergeUnknownFields(
      await warehouse.listUnknownFields(),
      seen,
      runId,
      new Date().toISOString(),
    );
    await warehouse.saveUnknownFields(rows);
    if (newPaths > 0) logger.warn({ newPaths }, 'source records hold fields grantflow does not map (schema drift)');
    return { newPaths, unmapped, retyped, ...said(joinOverflow(runOverflow, overflow)) };
  } catch (e) {
    logger.warn(`schema drift not recorded: ${firstLine(e)}`);
    return undefined;
  }
}
