/** Figure 5: Parquet snapshot time as a share of a whole demo-style run (small, DuckDB, rate 150/s like `demo`). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type ScaleName } from '../../src/simulator/index.ts';
import { isJsonObject } from '../../src/util/json.ts';
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
    return {
      name: 'snapshot',
      title: '5. Parquet snapshot time as a share of the whole run',
      scale: `${scale} (seed ${options.seed}), DuckDB`,
      durationMs: performance.now() - started,
      checks: [
        {
          figure: 'snapshot share of the run',
          value: `${(snapshotMs / 1000).toFixed(2)} s of ${(result.durationMs / 1000).toFixed(1)} s = ${pct(share)}`,
          goal: '≤ 10 %',
          met: share <= 0.1,
        },
      ],
      details: [
        `A demo-style run (\`grantflow demo\` settings): in-process simulator and grantflow both at ${demoRate} req/s, ` +
          `raw landing on, models and data tests, then Parquet snapshots of every table and model. ` +
          `${result.client.requests} requests; the longest stream took ${(extractMs / 1000).toFixed(1)} s; ` +
          `the run's lines: ${(result.after?.lines ?? []).filter((l) => !l.startsWith('  ')).join('; ')}.`,
      ],
    };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
