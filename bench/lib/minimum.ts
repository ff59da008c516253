/**
 * The fewest requests that can read a whole simulated site, computed from the simulator's own data:
 * Σ over list endpoints of ⌈rows / per_page⌉ (at least 1), plus one walk per parent for per-parent endpoints
 * (eligibility: one GET per organization, 404 or object).
 */
import type { SimulatorControl } from '../../src/simulator/index.ts';

/** Stream name → simulator collection, for top-level lists. */
const topLevel: Readonly<Record<string, string>> = {
  programs: 'programs',
  applications: 'applications',
  assignments: 'assignments',
  team_assignments: 'team_assignments',
  custom_fields: 'custom_fields',
  financial_transactions: 'financial_transactions',
  funds: 'funds',
  budgets: 'budgets',
  awards: 'awards',
  payments: 'payments',
  organizations: 'organizations',
  reports: 'reports',
  activity: 'activity',
  api_log: 'log',
};

const perApplication: Readonly<Record<string, string>> = {
  application_stages: 'application_stages',
  application_tasks: 'tasks',
  application_notes: 'notes',
};

const perOrganization: Readonly<Record<string, string>> = {
  organization_members: 'members',
  organization_teams: 'teams',
};

export interface MinimumRequests {
  readonly total: number;
  readonly topLevel: number;
  readonly perApplication: number;
  readonly perOrganization: number;
  readonly byStream: Readonly<Record<string, number>>;
}

const pages = (rows: number, perPage: number): number => Math.max(1, Math.ceil(rows / perPage));

export function minimumRequests(
  control: SimulatorControl,
  perPage: number,
  streams: readonly string[] | null = null,
): MinimumRequests {
  const want = (s: string): boolean => streams === null || streams.includes(s);
  const byStream: Record<string, number> = {};
  let top = 0;
  let app = 0;
  let org = 0;
  for (const [stream, name] of Object.entries(topLevel)) {
    if (!want(stream)) continue;
    top += byStream[stream] = pages(control.collection(name).length, perPage);
  }
  const appIds = control.data.applications.rows.map((a) => a['id'] as number);
  for (const [stream, name] of Object.entries(perApplication)) {
    if (!want(stream)) continue;
    let n = 0;
    for (const id of appIds) n += pages(control.collection(name, { application: id }).length, perPage);
    app += byStream[stream] = n;
  }
  const orgIds = control.data.organizations.rows.map((o) => o['id'] as number);
  for (const [stream, name] of Object.entries(perOrganization)) {
    if (!want(stream)) continue;
    let n = 0;
    for (const id of orgIds) n += pages(control.collection(name, { organization: id }).length, perPage);
    org += byStream[stream] = n;
  }
  if (want('eligibility')) org += byStream.eligibility = orgIds.length;
  return { total: top + app + org, topLevel: top, perApplication: app, perOrganization: org, byStream };
}

/** Requests of a count snapshot, token calls apart. */
export function splitTokenCalls(byTemplate: Readonly<Record<string, number>>): { api: number; token: number } {
  let api = 0;
  let token = 0;
  for (const [key, n] of Object.entries(byTemplate)) {
    if (key.includes('/api/o/')) token += n;
    else api += n;
  }
  return { api, token };
}

/** Requests to per-application endpoints (`/api/applications/{id}/...`). */
export function perApplicationCalls(byTemplate: Readonly<Record<string, number>>): number {
  return Object.entries(byTemplate)
    .filter(([k]) => k.startsWith('GET /api/applications/{id}/'))
    .reduce((a, [, n]) => a + n, 0);
}
