import type { SqlRunner } from '../sql-runner.ts';
import { literal } from '../values.ts';

/**
 * A table is re-analyzed once it holds more than this many times the pages its statistics were taken at. Row
 * counts need no ANALYZE (the planner scales them by the table's current size); what goes stale is the shape of
 * the data (distinct keys, ranges). Doubling as the trigger keeps the number of ANALYZEs of a table that grows
 * run by run logarithmic in its size (each one samples up to 30,000 rows: ~50 ms on a large target); autovacuum
 * refreshes statistics of slower-growing tables on its own schedule.
 */
const growthFactor = 2;

/**
 * ANALYZE those of `tables` (qualified, quoted names) never analyzed or grown past `growthFactor` since; returns
 * them. Reads pages as the running transaction sees them, so rows it just merged count. `concurrency` ANALYZEs run
 * at once, each on a connection of its own when `runner` is a pool's.
 */
export async function analyzeStale(runner: SqlRunner, tables: readonly string[], concurrency = 1): Promise<string[]> {
  if (tables.length === 0) return [];
  const { rows } = await runner.run(
    `SELECT t.name, c.reltuples::float8 AS analyzed_rows, c.relpages::float8 AS analyzed_pages,
       (pg_relation_size(c.oid) / current_setting('block_size')::int)::float8 AS pages
     FROM unnest(ARRAY[${tables.map(literal).join(', ')}]::text[]) AS t(name)
     JOIN pg_class c ON c.oid = t.name::regclass`,
  );
  const stale = rows
    .filter((r) => Number(r.analyzed_rows) < 0 || Number(r.pages) > growthFactor * Number(r.analyzed_pages))
    .map((r) => String(r.name));
  const queue = [...stale];
  const next = async (): Promise<void> => {
    for (let table = queue.shift(); table !== undefined; table = queue.shift()) await runner.run(`ANALYZE ${table}`);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, next));
  return stale;
}
