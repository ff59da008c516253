/**
 * Figure 6: a naive serial crawler (bench/naive-crawler.ts) against the same simulator settings as figure 1, and
 * its projection to a full site, next to grantflow's full and incremental request counts at its measured rate.
 */
import { startSimulator } from '../../src/simulator/index.ts';
import { crawl } from '../naive-crawler.ts';
import { minimumRequests } from '../lib/minimum.ts';
import { fmt, pct, type BenchOptions, type FigureResult } from '../lib/figure.ts';
import { rateStreams, siteLatencyMs, siteRate } from './rate.ts';

const paths: Readonly<Record<string, string>> = {
  programs: '/api/programs/',
  applications: '/api/applications/',
  assignments: '/api/assignments/',
  team_assignments: '/api/teamassignments/',
  custom_fields: '/api/customfields/',
  financial_transactions: '/api/financial-transactions/',
  funds: '/api/funds/',
  budgets: '/api/budgets/',
  awards: '/api/awards/',
  payments: '/api/payments/',
  organizations: '/api/organizations/',
  reports: '/api/reports/',
  activity: '/api/activity/',
  api_log: '/api/log/',
};

export interface GrantflowNumbers {
  /** Measured sustained rate (figure 1), req/s. */
  readonly rate: number;
  readonly full: number;
  readonly noChange: number;
  readonly change: number;
  readonly scale: string;
}

const minutes = (s: number): string => `${(s / 60).toFixed(1)} min`;

export async function naiveFigure(options: BenchOptions, gf: GrantflowNumbers): Promise<FigureResult> {
  const started = performance.now();
  const sim = await startSimulator({
    scale: 'small',
    seed: options.seed,
    rate: siteRate,
    latency: { ms: siteLatencyMs },
  });
  try {
    const lists = rateStreams.filter((s) => paths[s]).map((s) => paths[s]!);
    const stats = await crawl(sim.url, sim.credentials.access_token, lists);
    const counts = sim.control.counts();
    const secPerRequest = stats.ms / 1000 / stats.requests;
    const ok = stats.requests - stats.rateLimited;
    // Projection: every page of the whole site at the default per_page, at the measured pace and 429 share.
    const fullPages = minimumRequests(sim.control, sim.control.config.perPageDefault).total;
    const projectedRequests = fullPages * (stats.requests / ok);
    const projectedS = projectedRequests * secPerRequest;
    const gfSame = gf.scale === 'small';
    const gfFullS = gf.full / gf.rate;
    return {
      name: 'naive',
      title: '6. Baseline: a naive serial crawler',
      scale: `small (seed ${options.seed}), the streams of figure 1; projection to the whole small site`,
      durationMs: performance.now() - started,
      checks: [
        {
          figure: 'naive crawler, figure-1 streams',
          value: `${fmt(stats.requests)} requests, ${stats.rateLimited} × 429 (${pct(stats.rateLimited / stats.requests)}), ${(stats.ms / 1000).toFixed(1)} s`,
          goal: '—',
          met: null,
        },
        {
          figure: 'naive crawler, whole small site (projected)',
          value: `${fmt(projectedRequests)} requests, ${minutes(projectedS)} — every run`,
          goal: '—',
          met: null,
        },
        {
          figure: `grantflow, whole ${gf.scale} site at ${gf.rate.toFixed(2)} req/s`,
          value:
            `full ${fmt(gf.full)} requests ≈ ${minutes(gfFullS)}; no change ${fmt(gf.noChange)} ≈ ${(gf.noChange / gf.rate).toFixed(0)} s; ` +
            `1 % change ${fmt(gf.change)} ≈ ${(gf.change / gf.rate).toFixed(0)} s`,
          goal: '—',
          met: null,
        },
      ],
      details: [
        `\`bench/naive-crawler.ts\`: plain \`fetch\`, one request at a time, no throttle, the site's default per_page ` +
          `(${sim.control.config.perPageDefault}), sleeps 1 s after a 429 and retries, re-downloads everything every run. ` +
          `Same simulator settings as figure 1 (rate ${siteRate}/s, ${siteLatencyMs} ms latency). It read ${fmt(stats.records)} records; ` +
          `the simulator saw ${fmt(counts.total)} requests (${JSON.stringify(counts.byStatus)}); ` +
          `${(secPerRequest * 1000).toFixed(0)} ms per request on average = ${(1 / secPerRequest).toFixed(2)} req/s attempted, ` +
          `${(ok / (stats.ms / 1000)).toFixed(2)} successful req/s.`,
        `Projection: the whole small site is ${fmt(fullPages)} pages at per_page ${sim.control.config.perPageDefault} ` +
          `(computed from the simulator's data as in figure 2), scaled by the measured 429 share and time per request. ` +
          `grantflow's times are its request counts from figures 2–3${gfSame ? '' : ` (at ${gf.scale} scale)`} divided by ` +
          `its sustained rate from figure 1; they are projections too (a full small sync at 5 req/s is not run here: ` +
          `it would take ~${minutes(gfFullS)}). Speed-up on a full run ${(projectedS / gfFullS).toFixed(1)} ×, on a ` +
          `no-change run ${(projectedS / (gf.noChange / gf.rate)).toFixed(0)} ×.`,
      ],
    };
  } finally {
    await sim.close();
  }
}
