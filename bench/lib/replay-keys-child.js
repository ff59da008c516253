/**
 * Two replays of the same landed run into one fresh DuckDB file, in a process of its own: the first loads every row,
 * the second merges every row again over the stored ones (each key already present). With `keys`, the tables declare
 * their primary keys (added to the empty tables the migration made) before the first replay.
 * Usage: node bench/lib/replay-keys-child.js <warehouse path> <rawDir> <runId> <keys|none>
 * Prints one JSON line: {records, firstMs, againMs, firstCpuMs, againCpuMs, maxRssMb, keys} (CPU over all threads).
 */
import { runReplay } from '../../dist/pipeline/replay.js';
import { openWarehouse } from '../../dist/warehouse/index.js';
import { tables } from '../../dist/streams/registry.js';
import { silentLogger } from '../../dist/util/logger.js';
import { applyHeapPolicy } from '../../dist/util/heap-policy.js';
import { maxRssMb, processCpuMs } from './child-usage.js';

const [target, rawDir, runId, mode] = process.argv.slice(2);
if (!target || !rawDir || !runId || !mode)
  throw new Error('usage: replay-keys-child <file> <rawDir> <runId> <keys|none>');
applyHeapPolicy();

let keys = 0;
if (mode === 'keys') {
  const warehouse = await openWarehouse(target, { logger: silentLogger });
  try {
    await warehouse.migrate(tables);
    for (const t of tables) {
      if (t.primaryKey.length === 0 || t.kind === 'bookkeeping') continue;
      const columns = t.primaryKey.map((c) => `"${c}"`).join(', ');
      await warehouse.exec(`ALTER TABLE ${warehouse.qualify(t.name)} ADD PRIMARY KEY (${columns})`);
      keys++;
    }
  } finally {
    await warehouse.close();
  }
}

async function replayOnce() {
  const warehouse = await openWarehouse(target, { logger: silentLogger });
  const started = performance.now();
  const cpuStart = processCpuMs();
  let records = 0;
  try {
    const infos = await runReplay({ warehouse, rawDir, runId, siteTimeZone: 'UTC' });
    records = infos.reduce((a, i) => a + i.records, 0);
  } finally {
    // Closing checkpoints what the WAL still holds: part of the load.
    await warehouse.close();
  }
  return { records, ms: performance.now() - started, cpuMs: processCpuMs() - cpuStart };
}

const first = await replayOnce();
const again = await replayOnce();
process.stdout.write(
  JSON.stringify({
    records: first.records,
    firstMs: first.ms,
    againMs: again.ms,
    firstCpuMs: first.cpuMs,
    againCpuMs: again.cpuMs,
    maxRssMb: maxRssMb(),
    keys,
  }) + '\n',
);
