/**
 * Figure 1: sustained request rate against the simulator's default limit (5 req/s) with 200 ms latency.
 * The request window is taken from the simulator's own count, polled every 50 ms: first request to last.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../../src/simulator/index.ts';
import { benchSync, writeCreds } from '../lib/sync.ts';
import { splitTokenCalls } from '../lib/minimum.ts';
import { fmt, pct, type BenchOptions, type FigureResult } from '../lib/figure.ts';

/** Every top-level list plus the per-organization fan-out: ~360 requests (~75 s at 5/s) on `small`. */
export const rateStreams = [
  'programs',
  'applications',
  'assignments',
  'team_assignments',
  'custom_fields',
  'financial_transactions',
  'funds',
  'budgets',
  'awards',
  'payments',
  'organizations',
  'organization_members',
  'organization_teams',
  'eligibility',
  'reports',
  'activity',
  'api_log',
];

export const siteRate = 5;
export const siteLatencyMs = 200;

export async function rateFigure(options: BenchOptions): Promise<FigureResult> {
  const started = performance.now();
  const scale = 'small';
  const sim = await startSimulator({ scale, seed: options.seed, rate: siteRate, latency: { ms: siteLatencyMs } });
  const dir = await mkdtemp(join(tmpdir(), 'gf-bench-rate-'));
  // The process's CPU (the simulator runs in it too): what the pacing costs is a small part of it.
  const cpuAtStart = process.cpuUsage();
  let first = NaN;
  let last = NaN;
  let seen = 0;
  const poll = setInterval(() => {
    const total = sim.control.counts().total;
    const now = performance.now();
    if (total > 0 && Number.isNaN(first)) first = now;
    if (total !== seen) last = now;
    seen = total;
  }, 50);
  try {
    const creds = await writeCreds(sim, dir);
    const result = await benchSync(sim, dir, creds, { rate: siteRate, streams: rateStreams });
    clearInterval(poll);
    const cpu = process.cpuUsage(cpuAtStart);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    const counts = sim.control.counts();
    const { api, token } = splitTokenCalls(counts.byTemplate);
    const limited = counts.byStatus['429'] ?? 0;
    // n requests span n - 1 intervals; the 50 ms polling blurs each end by at most one poll.
    const windowS = (last - first) / 1000;
    const rate = (counts.total - 1) / windowS;
    const overall = counts.total / (result.durationMs / 1000);
    return {
      name: 'rate',
      title: '1. Sustained request rate at the site limit',
      scale: `${scale}, streams: every top-level list + organization fan-out (${rateStreams.length} streams)`,
      durationMs: performance.now() - started,
      numbers: { rate },
      checks: [
        {
          figure: 'sustained rate (first to last request)',
          value: `${rate.toFixed(2)} req/s = ${pct(rate / siteRate)} of ${siteRate}/s`,
          goal: `≥ 95 % of ${siteRate}/s`,
          met: rate >= 0.95 * siteRate,
        },
        {
          figure: '429 responses',
          value: `${limited} of ${counts.total} (${pct(limited / counts.total, 2)})`,
          goal: '0 (a strict sliding 1 s window)',
          met: limited === 0,
        },
      ],
      details: [
        `Simulator: rate ${siteRate}/s (sliding 1 s window), latency ${siteLatencyMs} ms on every request, seed ${options.seed}. ` +
          `grantflow: \`rate: ${siteRate}\`, default concurrency 8, per_page 100.`,
        `| measure | value |\n| --- | --- |\n` +
          `| requests received by the simulator | ${fmt(counts.total)} (${fmt(api)} API, ${fmt(token)} token) |\n` +
          `| request window (first → last, simulator count polled every 50 ms) | ${windowS.toFixed(1)} s |\n` +
          `| sustained rate in that window | ${rate.toFixed(3)} req/s |\n` +
          `| whole sync wall time (incl. DuckDB open, migrate, loads) | ${(result.durationMs / 1000).toFixed(1)} s → ${overall.toFixed(2)} req/s |\n` +
          `| simulator statuses | ${JSON.stringify(counts.byStatus)} |\n` +
          `| CPU of the process (client, simulator, DuckDB; user + system) | ${cpuS.toFixed(1)} s |\n` +
          `| client stats | requests ${result.client.requests}, retries ${result.client.retries}, rateLimited ${result.client.rateLimited}, refreshes ${result.client.refreshes}, ${fmt(result.client.bytes / 1024)} KiB |`,
      ],
    };
  } finally {
    clearInterval(poll);
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
