/**
 * One replay (normalise + load of landed raw pages) in a process of its own, so its peak RSS is its own.
 * Usage: node --import tsx bench/lib/replay-child.ts <warehouse path|postgres url> <schema> <rawDir> <runId>
 * Prints one JSON line: {records, rows, pages, quarantined, ms, cpuMs, maxRssMb}.
 */
import { runReplay } from '../../src/pipeline/replay.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { applyHeapPolicy } from '../../src/util/heap-policy.ts';
import { processCpuMs } from './machine.ts';

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
  const sum = (f: (i: (typeof infos)[number]) => number): number => infos.reduce((a, i) => a + f(i), 0);
  process.stdout.write(
    JSON.stringify({
      records: sum((i) => i.records),
      rows: sum((i) => i.rows),
      pages: sum((i) => i.pages),
      quarantined: sum((i) => i.quarantined),
      ms,
      cpuMs,
      // maxRSS is in kilobytes.
      maxRssMb: process.resourceUsage().maxRSS / 1024,
    }) + '\n',
  );
} finally {
  await warehouse.close();
}
