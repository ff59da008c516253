/**
 * One replay (normalise + load of landed raw pages) in a process of its own, so its peak RSS is its own.
 * Usage: node bench/lib/replay-child.js <warehouse path|postgres url> <schema> <rawDir> <runId>
 * Prints one JSON line: {records, rows, pages, quarantined, ms, cpuMs, maxRssMb}.
 */
import { runReplay } from '../../dist/pipeline/replay.js';
import { openWarehouse } from '../../dist/warehouse/index.js';
import { silentLogger } from '../../dist/util/logger.js';
import { applyHeapPolicy } from '../../dist/util/heap-policy.js';
import { maxRssMb, processCpuMs } from './child-usage.js';

const [target, schema, rawDir, runId] = process.argv.slice(2);
if (!target || !schema || !rawDir || !runId) throw new Error('usage: replay-child <target> <schema> <rawDir> <runId>');
// As the CLI does, so the figures are those of `grantflow replay`.
applyHeapPolicy();

const warehouse = await openWarehouse(target, { schema, logger: silentLogger });
try {
  const cpuStart = processCpuMs();
  const started = performance.now();
  const infos = await runReplay({ warehouse, rawDir, runId, siteTimeZone: 'UTC' });
  // Closing checkpoints what the WAL still holds: part of the load, as the ceiling's CHECKPOINT is.
  await warehouse.close();
  const ms = performance.now() - started;
  // Every thread of the process: the main thread, the replay worker, DuckDB's threads (not Postgres's server).
  const cpuMs = processCpuMs() - cpuStart;
  const sum = (f) => infos.reduce((a, i) => a + f(i), 0);
  process.stdout.write(
    JSON.stringify({
      records: sum((i) => i.records),
      rows: sum((i) => i.rows),
      pages: sum((i) => i.pages),
      quarantined: sum((i) => i.quarantined),
      ms,
      cpuMs,
      maxRssMb: maxRssMb(),
    }) + '\n',
  );
} finally {
  await warehouse.close();
}
