/**
 * Figure 8: a portfolio of two sites synced at once against each synced alone, at the real site limit (5 req/s per
 * client, 200 ms latency). Each site's requests are paced by its own client, so the two should overlap almost fully:
 * the goal is at most 1.2 × the slower site alone (DuckDB, one process, the views rebuilt after).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { settingsSchema } from '../../src/config/settings.ts';
import { runPortfolio } from '../../src/pipeline/portfolio.ts';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.ts';
import { isScaleName } from '../../src/simulator/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { benchSync, writeCreds } from '../lib/sync.ts';
import { fmt, type BenchOptions, type FigureResult } from '../lib/figure.ts';
import { rateStreams, siteLatencyMs, siteRate } from './rate.ts';

export async function portfolioFigure(options: BenchOptions): Promise<FigureResult> {
  const started = performance.now();
  const scale = isScaleName(options.scale) ? options.scale : 'small';
  const seeds = { north: options.seed, south: options.seed + 1 } as const;
  const sims: Partial<Record<keyof typeof seeds, SimulatorHandle>> = {};
  const dir = await mkdtemp(join(tmpdir(), 'gf-bench-portfolio-'));
  try {
    for (const [name, seed] of Object.entries(seeds) as [keyof typeof seeds, number][])
      sims[name] = await startSimulator({ scale, seed, rate: siteRate, latency: { ms: siteLatencyMs } });
    const { north, south } = sims as Record<keyof typeof seeds, SimulatorHandle>;
    const settings = { rate: siteRate, streams: rateStreams };

    // Each site alone, one after the other (never at once: they would skew each other).
    const alone: Record<string, { seconds: number; requests: number }> = {};
    for (const [name, sim] of [
      ['north', north],
      ['south', south],
    ] as const) {
      const own = join(dir, `alone-${name}`);
      await mkdir(own);
      const result = await benchSync(sim, own, await writeCreds(sim, own), settings);
      alone[name] = { seconds: result.durationMs / 1000, requests: result.client.requests };
    }

    // Both at once: fresh credentials files (each client rotates its own) into one new warehouse.
    const both = join(dir, 'portfolio');
    await mkdir(both);
    const sites = [];
    for (const [name, sim] of [
      ['north', north],
      ['south', south],
    ] as const) {
      const own = join(both, name);
      await mkdir(own);
      sites.push({ name, site: sim.url, credentials: await writeCreds(sim, own) });
    }
    const load = loadavg()[0] ?? NaN;
    const t0 = performance.now();
    const result = await runPortfolio({
      settings: settingsSchema.parse({
        warehouse: join(both, 'warehouse.duckdb'),
        snapshots: join(both, 'snapshots'),
        rawDir: join(both, 'raw'),
        landRaw: false,
        models: false,
        snapshot: false,
        logLevel: 'silent',
        ...settings,
      }),
      sites,
      run: sites,
      logger: silentLogger,
      env: {},
    });
    const together = (performance.now() - t0) / 1000;
    if (result.exitCode !== 0) throw new Error(`bench portfolio sync ended with exit ${result.exitCode}`);
    const slower = Math.max(alone.north?.seconds ?? NaN, alone.south?.seconds ?? NaN);
    const ratio = together / slower;
    const per = (name: string): string => {
      const o = result.sites.find((s) => s.site.name === name);
      return o?.result
        ? `${(o.result.durationMs / 1000).toFixed(1)} s, ${fmt(o.result.client.requests)} requests`
        : '?';
    };
    return {
      name: 'portfolio',
      title: '8. Two sites at once (a portfolio) against each alone',
      scale: `${scale} (seeds ${seeds.north} and ${seeds.south}), streams: as figure 1 (${rateStreams.length} streams)`,
      durationMs: performance.now() - started,
      numbers: { together, slower, ratio },
      checks: [
        {
          figure: 'portfolio of two sites / slower site alone',
          value: `${together.toFixed(1)} s / ${slower.toFixed(1)} s = ${ratio.toFixed(2)} ×`,
          goal: '≤ 1.2 ×',
          met: ratio <= 1.2,
        },
      ],
      details: [
        `Two simulators in this process, each at ${siteRate}/s per client and ${siteLatencyMs} ms latency. Each site ` +
          'synced alone into its own DuckDB file, then both at once by `runPortfolio` into one new file (a schema each, ' +
          "the portfolio views rebuilt after). No models, snapshots or raw pages. The machine's 1-minute load average " +
          `when the portfolio started: ${load.toFixed(1)} (other work shares its cores; the simulators share this ` +
          'process with the clients).',
        `| run | wall time | requests |\n| --- | --- | --- |\n` +
          `| north alone | ${alone.north?.seconds.toFixed(1)} s | ${fmt(alone.north?.requests ?? NaN)} |\n` +
          `| south alone | ${alone.south?.seconds.toFixed(1)} s | ${fmt(alone.south?.requests ?? NaN)} |\n` +
          `| portfolio (both, incl. views) | ${together.toFixed(1)} s | north ${per('north')}; south ${per('south')} |`,
      ],
    };
  } finally {
    for (const sim of Object.values(sims)) await sim?.close();
    await rm(dir, { recursive: true, force: true });
  }
}
