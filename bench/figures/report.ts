/** Figure 7: how long the HTML report of the small demo site takes to build, as `grantflow report` runs. */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type ScaleName } from '../../src/simulator/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { readReportData, renderReport } from '../../src/report/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { benchSync, writeCreds } from '../lib/sync.ts';
import { cliPath } from '../../src/util/package-root.ts';
import type { BenchOptions, FigureResult } from '../lib/figure.ts';

const runs = 3;

export async function reportFigure(options: BenchOptions): Promise<FigureResult> {
  const started = performance.now();
  const scale = options.scale as ScaleName;
  // The sync is not measured: the site answers as fast as it can.
  const sim = await startSimulator({ scale, seed: options.seed, rate: 0 });
  const dir = await mkdtemp(join(tmpdir(), 'gf-bench-report-'));
  try {
    const creds = await writeCreds(sim, dir);
    await benchSync(sim, dir, creds, { rate: 1000, models: true });
    const warehouse = join(dir, 'warehouse.duckdb');
    // The command as a user runs it (process start, imports, read, render, write), `runs` times.
    const load = loadavg()[0] ?? NaN;
    const cli: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const child = spawnSync(
        process.execPath,
        [cliPath, 'report', '--warehouse', warehouse, '--out', join(dir, 'report')],
        { encoding: 'utf8', env: { ...process.env, GRANTFLOW_LOG_LEVEL: 'warn' } },
      );
      if (child.status !== 0) throw new Error(`grantflow report failed: ${child.stderr}`);
      cli.push(performance.now() - t0);
    }
    // Where the time goes, in process: reading (models, runs, data tests) against rendering the pages.
    const w = await openWarehouse(warehouse, { readOnly: true, logger: silentLogger });
    let readMs: number;
    let renderMs: number;
    let bytes: number;
    try {
      const t0 = performance.now();
      const data = await readReportData(w);
      readMs = performance.now() - t0;
      const t1 = performance.now();
      const pages = await renderReport(data);
      renderMs = performance.now() - t1;
      bytes = pages.reduce((a, [, html]) => a + Buffer.byteLength(html), 0);
    } finally {
      await w.close();
    }
    const sorted = [...cli].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
    const worst = sorted.at(-1) ?? NaN;
    return {
      name: 'report',
      title: '7. HTML report build time',
      scale: `${scale} (seed ${options.seed}), DuckDB`,
      durationMs: performance.now() - started,
      checks: [
        {
          figure: '`grantflow report` of the demo site',
          value: `${(median / 1000).toFixed(1)} s (median of ${runs}; slowest ${(worst / 1000).toFixed(1)} s)`,
          goal: '< 10 s',
          met: worst < 10_000,
        },
      ],
      details: [
        `\`grantflow report\` run ${runs} times against the warehouse of one sync (models and data tests) of the ` +
          `${scale} site: ${cli.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')}, the whole command from ` +
          `process start. In process, reading the warehouse (the model tables, runs, stream states, quarantine and ` +
          `every data test, run afresh) took ${(readMs / 1000).toFixed(2)} s and rendering the seven pages (Vega-Lite ` +
          `compiled and drawn to SVG) ${(renderMs / 1000).toFixed(2)} s, for ${(bytes / 1e6).toFixed(2)} MB of HTML. ` +
          `The machine's 1-minute load average when the runs started: ${load.toFixed(1)} (other work shares its cores).`,
      ],
    };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
