import type { UnknownFieldSeen } from '../extract/unknown-fields.ts';
import type { UnknownFieldRow } from '../warehouse/bookkeeping.ts';
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
}

/** Catalog rows after a run: what it saw merged into what was stored (types joined, records added up). */
export function mergeUnknownFields(
  stored: readonly UnknownFieldRow[],
  seen: readonly UnknownFieldSeen[],
  runId: string,
  at: string,
): { rows: UnknownFieldRow[]; newPaths: number } {
  const byKey = new Map(stored.map((r) => [`${r.stream}\u0000${r.path}`, r]));
  let newPaths = 0;
  const rows = seen.map((s): UnknownFieldRow => {
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
  return { rows, newPaths };
}

/**
 * Stores what the run saw in `_grantflow_unknown_fields`. Drift never fails a run: a write that fails is logged and
 * the run goes on without its drift summary.
 */
export async function recordDrift(
  warehouse: Warehouse,
  seen: readonly UnknownFieldSeen[],
  runId: string,
  logger: Logger,
): Promise<DriftSummary | undefined> {
  const unmapped = seen.filter((s) => s.kind === 'unmapped').length;
  const retyped = seen.length - unmapped;
  if (seen.length === 0) return { newPaths: 0, unmapped, retyped };
  try {
    const { rows, newPaths } = mergeUnknownFields(
      await warehouse.listUnknownFields(),
      seen,
      runId,
      new Date().toISOString(),
    );
    await warehouse.saveUnknownFields(rows);
    if (newPaths > 0) logger.warn({ newPaths }, 'source records hold fields grantflow does not map (schema drift)');
    return { newPaths, unmapped, retyped };
  } catch (e) {
    logger.warn(`schema drift not recorded: ${firstLine(e)}`);
    return undefined;
  }
}
