import type { SqlRunner } from '../sql-runner.ts';
import { literal } from '../values.ts';
import { isLockTimeout } from './sql-dialect.ts';

/**
 * A table is re-analyzed once it holds more than this many times the pages its statistics were taken at. Row
 * counts need no ANALYZE (the planner scales them by the table's current size); what goes stale is the shape of
 * the data (distinct keys, ranges). Doubling as the trigger keeps the number of ANALYZEs of a table that grows
 * run by run logarithmic in its size (each one samples up to 30,000 rows: ~50 ms on a large target); autovacuum
 * refreshes statistics of slower-growing tables on its own schedule.
 */
const growthFactor = 2;

/**
 * Statistics are optional: with `locked`, a table whose lock another session holds (an analyst's `LOCK TABLE`, a
 * manual VACUUM) is given one attempt under `lockTimeout` (a lockTimeoutStatement), then skipped and reported to
 * `skipped`, instead of the run waiting for it; it stays stale, so the next run analyzes it.
 */
export interface SkipLocked {
  readonly lockTimeout: string;
  readonly skipped: (table: string) => Promise<void>;
}

/**
 * ANALYZE those of `tables` (qualified, quoted names) never analyzed or grown past `growthFactor` since; returns
 * them. Reads pages as the running transaction sees them, so rows it just merged count. `concurrency` tables are
 * checked and analyzed at once, each on a connection of its own when `runner` is a pool's.
 */
export async function analyzeStale(
  runner: SqlRunner,
  tables: readonly string[],
  concurrency = 1,
  locked?: SkipLocked,
): Promise<string[]> {
  // Each table on its own: pg_relation_size takes the table's ACCESS SHARE lock, so one locked table must not hold
  // up the check of the others.
  const bounded = (statement: string): string => (locked ? `${locked.lockTimeout}; ${statement}` : statement);
  const isStale = async (table: string): Promise<boolean> => {
    const { rows } = await runner.run(
      bounded(
        `SELECT c.reltuples::float8 AS analyzed_rows, c.relpages::float8 AS analyzed_pages,
           (pg_relation_size(c.oid) / current_setting('block_size')::int)::float8 AS pages
         FROM pg_class c WHERE c.oid = ${literal(table)}::regclass`,
      ),
    );
    const r = rows[0];
    return !!r && (Number(r.analyzed_rows) < 0 || Number(r.pages) > growthFactor * Number(r.analyzed_pages));
  };
  const stale = new Set<string>();
  const queue = [...tables];
  const next = async (): Promise<void> => {
    for (let table = queue.shift(); table !== undefined; table = queue.shift()) {
      try {
        if (!(await isStale(table))) continue;
        await runner.run(bounded(`ANALYZE ${table}`));
        stale.add(table);
      } catch (e) {
        if (!locked || !isLockTimeout(e)) throw e;
        await locked.skipped(table);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, next));
  return tables.filter((t) => stale.has(t));
}
