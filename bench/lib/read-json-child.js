/**
 * The ceiling for figure 4: DuckDB's own `read_json` ingest of the same records. The raw pages' records are first
 * written (untimed) as one NDJSON file per stream; then `CREATE TABLE AS SELECT * FROM read_json(...)` is timed.
 * Usage: node bench/lib/read-json-child.js <rawDir> <runId> <workDir>
 * Prints one JSON line: {records, ms, cpuMs, maxRssMb}.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { listRawStreams, readRawLines } from '../../dist/extract/raw-landing.js';
import { parseJson } from '../../dist/source/index.js';
import { isJsonObject } from '../../dist/util/json.js';
import { maxRssMb, processCpuMs } from './child-usage.js';

const [rawDir, runId, workDir] = process.argv.slice(2);
if (!rawDir || !runId || !workDir) throw new Error('usage: read-json-child <rawDir> <runId> <workDir>');

const dir = join(rawDir, runId);
await mkdir(workDir, { recursive: true });
const files = [];
for (const stream of await listRawStreams(dir)) {
  const path = join(workDir, `${stream}.ndjson`);
  const out = createWriteStream(path);
  let records = 0;
  for await (const line of readRawLines(dir, stream)) {
    if (line.type !== 'page' || line.status !== 200) continue;
    const parsed = parseJson(line.body);
    if (!parsed.ok) continue;
    const v = parsed.value;
    const items = Array.isArray(v) ? v : isJsonObject(v) && Array.isArray(v.results) ? v.results : [v];
    for (const item of items) {
      records++;
      if (!out.write(JSON.stringify(item) + '\n')) await once(out, 'drain');
    }
  }
  out.end();
  await once(out, 'finish');
  if (records > 0) files.push({ stream, path, records });
}

const instance = await DuckDBInstance.create(join(workDir, 'ceiling.duckdb'));
const connection = await instance.connect();
const cpuStart = processCpuMs();
const started = performance.now();
for (const f of files) {
  await connection.run(
    `CREATE TABLE "${f.stream}" AS SELECT * FROM read_json('${f.path.replace(/'/g, "''")}', format = 'newline_delimited', maximum_object_size = 16777216)`,
  );
}
await connection.run('CHECKPOINT');
const ms = performance.now() - started;
const cpuMs = processCpuMs() - cpuStart;
connection.closeSync();
instance.closeSync();
process.stdout.write(
  JSON.stringify({
    records: files.reduce((a, f) => a + f.records, 0),
    ms,
    cpuMs,
    maxRssMb: maxRssMb(),
  }) + '\n',
);
