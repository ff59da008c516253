import type { StreamDef } from '../streams/stream-def.ts';
import type { Warehouse } from '../warehouse/types.ts';
import { isJsonObject } from '../util/json.ts';

export interface StreamReset {
  readonly stream: string;
  /** A state was stored (and is now forgotten). */
  readonly hadState: boolean;
  /** Parent marks dropped (fan-out streams): each of those parents' children is read again. */
  readonly marksDropped: number;
}

/**
 * Forgets what the warehouse knows of each stream's progress, so the next sync reads it whole: its state (the highest
 * id of an append-only log, the last full refresh of a fan-out stream) becomes empty and a fan-out stream's parent
 * marks are dropped, in one load transaction per stream. Rows stay: the next sync merges over them and soft-deletes
 * only what a complete read no longer finds. The caller holds the run lock.
 */
export async function resetStreams(warehouse: Warehouse, defs: readonly StreamDef[]): Promise<StreamReset[]> {
  const out: StreamReset[] = [];
  const at = new Date().toISOString();
  for (const def of defs) {
    const state = await warehouse.readState(def.name);
    const hadState = isJsonObject(state) && Object.keys(state).length > 0;
    const marks = def.parent ? [...(await warehouse.readParentMarks(def.name)).keys()] : [];
    const load = await warehouse.openLoad();
    await load.commit({
      runId: `reset-${at}`,
      extractedAt: at,
      state: { stream: def.name, value: {} },
      ...(marks.length > 0 ? { dropParentMarks: { stream: def.name, parentIds: marks } } : {}),
    });
    out.push({ stream: def.name, hadState, marksDropped: marks.length });
  }
  return out;
}
