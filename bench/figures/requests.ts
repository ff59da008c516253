/**
 * Figures 2 and 3: requests of a full sync against the minimum computed from the simulator's data, then of a
 * no-change and a 1 %-change incremental sync. Rate limit off (counts do not depend on pacing).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type ScaleName, type SimulatorHandle } from '../../src/simulator/index.ts';
import { benchSync, writeCreds } from '../lib/sync.ts';
import { minimumRequests, perApplicationCalls, splitTokenCalls } from '../lib/minimum.ts';
import { fmt, type BenchOptions, type FigureResult } from '../lib/figure.ts';

const perPageMax = 100;

interface SyncCount {
  api: number;
  token: number;
  perApp: number;
  topLevel: number;
  ms: number;
  byTemplate: Readonly<Record<string, number>>;
}

async function counted(sim: SimulatorHandle, run: () => Promise<{ durationMs: number }>): Promise<SyncCount> {
  sim.control.resetCounts();
  const { durationMs } = await run();
  const byTemplate = sim.control.counts().byTemplate;
  const { api, token } = splitTokenCalls(byTemplate);
  const perApp = perApplicationCalls(byTemplate);
  const fanOut = Object.entries(byTemplate)
    .filter(([k]) => k.includes('{id}'))
    .reduce((a, [, n]) => a + n, 0);
  return { api, token, perApp, topLevel: api - fanOut, ms: durationMs, byTemplate };
}

export interface RequestFigures {
  readonly full: FigureResult;
  readonly incremental: FigureResult;
  /** For figure 6's comparison. */
  readonly fullRequests: number;
  readonly noChangeRequests: number;
  readonly changeRequests: number;
}

export async function requestFigures(options: BenchOptions): Promise<RequestFigures> {
  const started = performance.now();
  const scale = options.scale as ScaleName;
  const sim = await startSimulator({ scale, seed: options.seed, rate: 0, perPageMax });
  const dir = await mkdtemp(join(tmpdir(), 'gf-bench-requests-'));
  try {
    const creds = await writeCreds(sim, dir);
    const sync = (): Promise<{ durationMs: number }> => benchSync(sim, dir, creds, { rate: 1000, concurrency: 16 });
    const min = minimumRequests(sim.control, perPageMax);
    const full = await counted(sim, sync);
    const fullMs = performance.now() - started;
    const t1 = performance.now();
    const noChange = await counted(sim, sync);
    const changedN = Math.max(1, Math.round(sim.control.data.applications.rows.length / 100));
    const changed = sim.control.applyChanges({ updated: changedN }).updated.length;
    const change = await counted(sim, sync);
    const ratio = full.api / min.total;
    const templates = Object.keys(full.byTemplate).sort();
    const table =
      `| endpoint | minimum | full | no change | 1 % change |\n| --- | ---: | ---: | ---: | ---: |\n` +
      templates
        .map(
          (t) =>
            `| \`${t}\` | ${minFor(t, min.byStream)} | ${fmt(full.byTemplate[t] ?? 0)} | ${fmt(noChange.byTemplate[t] ?? 0)} | ${fmt(change.byTemplate[t] ?? 0)} |`,
        )
        .join('\n') +
      `\n| **total (API)** | **${fmt(min.total)}** | **${fmt(full.api)}** | **${fmt(noChange.api)}** | **${fmt(change.api)}** |` +
      `\n| token calls | 0 | ${full.token} | ${noChange.token} | ${change.token} |`;
    return {
      fullRequests: full.api,
      noChangeRequests: noChange.api,
      changeRequests: change.api,
      full: {
        name: 'requests',
        title: '2. Requests of a full sync against the minimum',
        scale: `${scale} (seed ${options.seed})`,
        durationMs: fullMs,
        checks: [
          {
            figure: 'full sync requests / minimum',
            value: `${fmt(full.api)} / ${fmt(min.total)} = ${ratio.toFixed(3)} ×`,
            goal: '≤ 1.05 ×',
            met: ratio <= 1.05,
          },
        ],
        details: [
          `Minimum = Σ over list endpoints of ⌈rows / ${perPageMax}⌉ (at least 1) + one walk per parent for each ` +
            `per-parent endpoint (children paginated the same way; eligibility one GET per organization), computed ` +
            `from the simulator's collections (\`bench/lib/minimum.ts\`): top-level ${fmt(min.topLevel)}, ` +
            `per-application ${fmt(min.perApplication)}, per-organization ${fmt(min.perOrganization)}. Actual = the ` +
            `simulator's request counts; token calls listed apart. Simulator rate limit off, grantflow \`rate: 1000, ` +
            `concurrency: 16\`; full sync took ${(full.ms / 1000).toFixed(1)} s. The extra \`programs\` request is the ` +
            `pre-flight check (site reachable, credentials valid) before anything is written.`,
          table,
        ],
      },
      incremental: {
        name: 'incremental',
        title: '3. Incremental syncs: no change and 1 % changed',
        scale: `${scale} (seed ${options.seed})`,
        durationMs: performance.now() - t1,
        numbers: { full: full.api, noChange: noChange.api, change: change.api },
        checks: [
          {
            figure: 'no-change sync requests / top-level pages',
            value: `${fmt(noChange.api)} / ${fmt(min.topLevel)} = ${(noChange.api / min.topLevel).toFixed(3)} ×`,
            goal: '≤ 1.1 × top-level pages',
            met: noChange.api <= 1.1 * min.topLevel,
          },
          {
            figure: 'per-application calls, 1 % changed',
            value: `${fmt(change.perApp)} for ${changed} changed applications (3 × ${changed} = ${3 * changed})`,
            goal: '= 3 × changed applications',
            met: change.perApp === 3 * changed,
          },
          {
            figure: 'requests vs full sync',
            value: `no change ${fmt(noChange.api)} (${((noChange.api / full.api) * 100).toFixed(1)} % of full), 1 % change ${fmt(change.api)} (${((change.api / full.api) * 100).toFixed(1)} %)`,
            goal: '—',
            met: null,
          },
        ],
        details: [
          `Same site and warehouse as figure 2, right after the full sync. The 1 % case is ` +
            `\`control.applyChanges({updated: ${changedN}})\` (moves each application's \`updated_at\`). Top-level lists are ` +
            `re-scanned every run (deletions are found by complete scans); activity and the API log stop at records ` +
            `already held. No-change sync ${(noChange.ms / 1000).toFixed(1)} s, 1 %-change sync ${(change.ms / 1000).toFixed(1)} s.`,
        ],
      },
    };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const templateStream: Readonly<Record<string, string>> = {
  'GET /api/programs/': 'programs',
  'GET /api/applications/': 'applications',
  'GET /api/assignments/': 'assignments',
  'GET /api/teamassignments/': 'team_assignments',
  'GET /api/customfields/': 'custom_fields',
  'GET /api/financial-transactions/': 'financial_transactions',
  'GET /api/funds/': 'funds',
  'GET /api/budgets/': 'budgets',
  'GET /api/awards/': 'awards',
  'GET /api/payments/': 'payments',
  'GET /api/organizations/': 'organizations',
  'GET /api/reports/': 'reports',
  'GET /api/activity/': 'activity',
  'GET /api/log/': 'api_log',
  'GET /api/applications/{id}/stages/': 'application_stages',
  'GET /api/applications/{id}/tasks/': 'application_tasks',
  'GET /api/applications/{id}/notes/': 'application_notes',
  'GET /api/organizations/{id}/members/': 'organization_members',
  'GET /api/organizations/{id}/teams/': 'organization_teams',
  'GET /api/organizations/{id}/eligibility/': 'eligibility',
};

function minFor(template: string, byStream: Readonly<Record<string, number>>): string {
  const stream = templateStream[template];
  const n = stream ? byStream[stream] : undefined;
  return n === undefined ? '—' : fmt(n);
}
