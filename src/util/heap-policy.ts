import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets its heap grow past the data still live after a full collection: 100 % (a factor of 2). V8's
 * own policy raises that factor up to 4 when it sees a high allocation rate, which a load is: the heap of a
 * Postgres replay reached 240 MB while its live data after a full GC was ~50 MB. Measured, 3 alternating runs
 * each: a medium Postgres replay peaks at ~233 MB instead of 300–394 MB in the same time (large: 280 instead of
 * 373–408 MB); DuckDB medium 545 → 517 MB for ~4 % more time. 50 % saved little more memory (~215 MB) for ~4 %
 * more Postgres time and ~8 % more DuckDB time.
 */
export const heapGrowingPercent = 100;

/** Applies the policy to this process and its worker threads; call once, before the work starts. */
export function applyHeapPolicy(): void {
  setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
}
