/**
 * Figure 5: Parquet snapshot time as a share of a whole demo-style run (small, DuckDB, rate 150/s like `demo`), and
 * the snapshot's bytes without `_raw` (the default) against the same warehouse written with it (`snapshotRaw`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type ScaleName } from '../../src/simulator/index.ts';
import { isJsonObject } from '../../src/util/json.ts';
import { readManifest, writeSnapshots } from '../../src/snapshot/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { benchSync, writeCreds } from '../lib/sync.ts';
import { pct, type BenchOptions, type FigureResult } from '../lib/figure.ts';

const demoRate = 150;

export async function snapshotFigure(options: BenchOptions): Promise<FigureResult> {
  const started = performance.now();
  const scale = options.scale as ScaleName;
  const sim = await startSimulator({ scale, seed: options.seed, rate: demoRate });
  const dir = await mkdtemp(join(tmpdir(), 'gf-bench-snapshot-'));
  try {
    const creds = await writeCreds(sim, dir);
    const result = await benchSync(sim, dir, creds, {
      rate: demoRate,
      landRaw: true,
      models: true,
      snapshot: true,
    });
    const summary = result.after?.summary;
    const snapshotMs = isJsonObject(summary) && typeof summary.snapshotMs === 'number' ? summary.snapshotMs : NaN;
    const share = snapshotMs / result.durationMs;
    const extractMs = result.streams.reduce((a, s) => Math.max(a, s.durationMs), 0);
    const bytesOf = (snapshots: string): { bytes: number; tables: number } => {
      const entries = Object.values(readManifest(snapshots)?.tables ?? {});
      return { bytes: entries.reduce((a, e) => a + e.bytes, 0), tables: entries.length };
    };
    const without = bytesOf(join(dir, 'snapshots'));
    // The same warehouse and tables again, `_raw` kept: what every snapshot held before it was left out.
    const warehouse = await openWarehouse(join(dir, 'warehouse.duckdb'));
    try {
      const tables = Object.keys(readManifest(join(dir, 'snapshots'))?.tables ?? {});
      await writeSnapshots(warehouse, { dir: join(dir, 'with-raw'), runId: 'bench-raw', retain: 1, tables, raw: true });
    } finally {
      await warehouse.close();
    }
    const withRaw = bytesOf(join(dir, 'with-raw'));
    const saved = 1 - without.bytes / withRaw.bytes;
    return {
      name: 'snapshot',
      title: '5. Parquet snapshots: time as a share of the whole run, and bytes',
      scale: `${scale} (seed ${options.seed}), DuckDB`,
      durationMs: performance.now() - started,
      checks: [
        {
          figure: 'snapshot share of the run',
          value: `${(snapshotMs / 1000).toFixed(2)} s of ${(result.durationMs / 1000).toFixed(1)} s = ${pct(share)}`,
          goal: '≤ 10 %',
          met: share <= 0.1,
        },
        {
          figure: 'snapshot bytes without _raw (default) / with it',
          value: `${without.bytes.toLocaleString('en-US')} / ${withRaw.bytes.toLocaleString('en-US')} B = ${pct(saved)} smaller`,
          goal: '≥ 40 % smaller',
          met: saved >= 0.4,
        },
      ],
      details: [
        `A demo-style run (\`grantflow demo\` settings): in-process simulator and grantflow both at ${demoRate} req/s, ` +
          `raw landing on, models and data tests, then Parquet snapshots of every table and model. ` +
          `${result.client.requests} requests; the longest stream took ${(extractMs / 1000).toFixed(1)} s; ` +
          `the run's lines: ${(result.after?.lines ?? []).filter((l) => !l.startsWith('  ')).join('; ')}.`,
        `Bytes: the ${without.tables} files of that snapshot (zstd, \`_raw\` left out, the default) against the same ` +
          `${withRaw.tables} tables of the same warehouse written again with \`snapshotRaw\` (each row's source JSON ` +
          `kept, as every snapshot held it before it was made optional).`,
      ],
    };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
