/**
 * The floor of figure 4's JavaScript path: reading, parsing and normalising the landed pages into rows exactly as a
 * replay does (`replayEvents`, one stream after another on one thread), with no warehouse. A replay cannot be
 * faster than this on one core, and it needs the same CPU on top of everything the warehouse does.
 * Usage: node bench/lib/normalise-child.js <rawDir> <runId>
 * Prints one JSON line: {records, rows, ms, cpuMs, maxRssMb}.
 */
import { join } from 'node:path';
import { replayEvents } from '../../dist/pipeline/replay-events.js';
import { landedStreams } from '../../dist/pipeline/replay.js';
import { defaultCatalog } from '../../dist/streams/registry.js';
import { applyHeapPolicy } from '../../dist/util/heap-policy.js';
import { maxRssMb, processCpuMs } from './child-usage.js';

const [rawDir, runId] = process.argv.slice(2);
if (!rawDir || !runId) throw new Error('usage: normalise-child <rawDir> <runId>');
applyHeapPolicy();

const dir = join(rawDir, runId);
const context = { catalog: defaultCatalog, runId, extractedAt: new Date().toISOString(), siteTimeZone: 'UTC' };
let records = 0;
let rows = 0;
const cpuStart = processCpuMs();
const started = performance.now();
for (const def of await landedStreams(dir, defaultCatalog)) {
  for await (const event of replayEvents(dir, def, context)) {
    if (event.kind === 'commit') records += event.counts.records;
    else rows += event.batch.rows.length;
  }
}
const ms = performance.now() - started;
process.stdout.write(
  JSON.stringify({ records, rows, ms, cpuMs: processCpuMs() - cpuStart, maxRssMb: maxRssMb() }) + '\n',
);
