import type { JsonObject } from '../util/json.ts';

/** Records kept sorted by integer `id`, with O(1) lookup; the simulator's list order is id ascending. */
export class Collection {
  readonly rows: JsonObject[] = [];
  private readonly byId = new Map<number, JsonObject>();

  constructor(rows: Iterable<JsonObject> = []) {
    for (const r of rows) this.insert(r);
  }

  get size(): number {
    return this.rows.length;
  }

  get(id: number): JsonObject | undefined {
    return this.byId.get(id);
  }

  maxId(): number {
    const last = this.rows[this.rows.length - 1];
    return last ? idOf(last) : 0;
  }

  insert(row: JsonObject): void {
    const id = idOf(row);
    if (this.byId.has(id)) throw new Error(`duplicate id ${id}`);
    this.byId.set(id, row);
    if (this.rows.length === 0 || id > this.maxId()) {
      this.rows.push(row);
      return;
    }
    this.rows.splice(this.indexAtOrAfter(id), 0, row);
  }

  remove(id: number): JsonObject | undefined {
    const row = this.byId.get(id);
    if (!row) return undefined;
    this.byId.delete(id);
    this.rows.splice(this.indexAtOrAfter(id), 1);
    return row;
  }

  private indexAtOrAfter(id: number): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (idOf(this.rows[mid] as JsonObject) < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export function idOf(row: JsonObject): number {
  const id = row['id'];
  if (typeof id !== 'number') throw new Error('record without an integer id');
  return id;
}
