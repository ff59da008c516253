/**
 * Issue 25 acceptance: the report opened in a real headless browser (Debian's chromium, driven by playwright-core)
 * from file:// URLs, on DuckDB (written by the sync's `report` setting) and on Postgres (written by `grantflow
 * report`). Every page loads with no console error and no request, every chart is an SVG, and every number in the
 * tables equals what this test computes from the warehouse's rows (read here with its own SQL) through the report's
 * formatting functions. A screenshot of each page is kept under .vitest/artifacts/report/.
 *
 * Issue 39: the site has two reviewers of the same name, and the report draws and lists them apart; every page is
 * laid out for a desktop (1280 px: no table cut) and a phone (400 px: charts the screen's width, text of 10 px or
 * more, wide tables scrolling in their own box with the row headers kept in view).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { generateDataset, type SimulatorHandle } from '../../src/simulator/index.ts';
import type { CellValue, Row } from '../../src/normalize/table-def.ts';
import { enums } from '../../src/normalize/enums.ts';
import type { SyncResult } from '../../src/pipeline/sync.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { writeReport } from '../../src/report/index.ts';
import { runDataTests } from '../../src/models/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { isJsonObject, type JsonObject } from '../../src/util/json.ts';
import {
  formatAge,
  formatCount,
  formatDays,
  formatDuration,
  formatMoney,
  formatMoneyTotal,
  formatPercent,
  formatTime,
  formatYesNo,
  nameOr,
  ratio,
  unknownText,
} from '../../src/report/format.ts';
import { runSync } from '../../src/pipeline/sync.ts';
import { settingsSchema } from '../../src/config/settings.ts';
import {
  postgresSchema,
  proxySite,
  runCli,
  startSite,
  syncOnce,
  tempDir,
  writeCredentials,
} from '../support/harness.ts';
import { packageRoot } from '../../src/util/package-root.ts';
import { suiteChromium } from '../support/chromium.ts';

const pages = ['index', 'funding', 'awards', 'reviews', 'pipeline', 'data-health', 'dictionary'] as const;
const artifacts = join(packageRoot, '.vitest/artifacts/report');

/** The first tiny site whose reviewers include two people of the same name (the names are drawn from small pools). */
function sameNameSeed(): number {
  for (let seed = 1; ; seed++) {
    const names = generateDataset({ scale: 'tiny', seed }).reviewers.map((r) => `${r.first_name} ${r.last_name}`);
    if (new Set(names).size < names.length) return seed;
  }
}

/** The chromium the global setup found or installed (test/support/chromium.ts); never a browser download. */
function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: suiteChromium(),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

interface Opened {
  readonly page: Page;
  readonly consoleErrors: string[];
  readonly requests: string[];
}

/**
 * Opens one page of a report from its file, recording console errors and any request not to a file; with `shot`,
 * keeps a screenshot (the whole page; the dictionary's first screen, as it is thousands of pixels long).
 */
async function open(browser: Browser, dir: string, name: string, shot?: string, width = 1360): Promise<Opened> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const consoleErrors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) requests.push(r.url());
  });
  const response = await page.goto(`file://${join(dir, `${name}.html`)}`, { waitUntil: 'load' });
  expect(response?.ok() ?? true).toBe(true);
  if (shot) {
    await mkdir(artifacts, { recursive: true });
    await page.screenshot({ path: join(artifacts, `${shot}-${name}.png`), fullPage: name !== 'dictionary' });
  }
  return { page, consoleErrors, requests };
}

/** The cells' text of a table's body rows (or its totals row), as a reader sees them. */
function tableRows(page: Page, id: string, part: 'tbody' | 'tfoot' = 'tbody'): Promise<string[][]> {
  return page.$$eval(`table[data-table="${id}"] > ${part} > tr`, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll(':scope > th, :scope > td')].map((c) => (c.textContent ?? '').trim())),
  );
}

/** The bars of a chart as drawn at one size: each bar's value and label, from the description Vega gives it. */
function chartBars(page: Page, chart: string, size: string): Promise<{ label: string; value: number }[]> {
  return page.$$eval(`[data-chart="${chart}"] svg[data-size="${size}"] path[aria-roledescription="bar"]`, (bars) =>
    bars.map((bar) => {
      const [value = '', label = ''] = (bar.getAttribute('aria-label') ?? '').split('; ');
      return {
        value: Number(value.slice(value.indexOf(': ') + 2).replaceAll(',', '')),
        label: label.slice(label.indexOf(': ') + 2),
      };
    }),
  );
}

/** How a page is laid out: what overflows, how each table fits its box, and how big the chart text is on screen. */
function layoutOf(page: Page): Promise<{
  scrollWidth: number;
  clientWidth: number;
  tables: { id: string; scrollWidth: number; boxWidth: number; firstColumn: string }[];
  charts: { id: string; visible: number; width: number; boxWidth: number }[];
  texts: { text: string; px: number }[];
}> {
  // Evaluated on the <html> element: the test's TypeScript has no DOM globals.
  return page.$eval('html', (root) => {
    type Node = typeof root;
    const style = (e: Node) => root.ownerDocument.defaultView!.getComputedStyle(e);
    const visible = (e: Node): boolean => e.getClientRects().length > 0;
    return {
      scrollWidth: root.scrollWidth,
      clientWidth: root.clientWidth,
      tables: [...root.querySelectorAll('table')].map((t) => ({
        id: t.getAttribute('data-table') ?? '',
        scrollWidth: t.scrollWidth,
        boxWidth: t.parentElement!.clientWidth,
        firstColumn: style(t.querySelector('tr > :first-child')!).position,
      })),
      charts: [...root.querySelectorAll('[data-chart]')].map((c) => {
        const shown = [...c.querySelectorAll('svg')].filter(visible);
        return {
          id: c.getAttribute('data-chart') ?? '',
          visible: shown.length,
          width: shown[0]?.getBoundingClientRect().width ?? 0,
          boxWidth: c.clientWidth,
        };
      }),
      // A text's size on screen: its font size times the scale the SVG is drawn at.
      texts: [...root.querySelectorAll('[data-chart] svg')].filter(visible).flatMap((svg) => {
        const scale = svg.getBoundingClientRect().width / Number(svg.getAttribute('width'));
        return [...svg.querySelectorAll('text')]
          .filter((t) => (t.textContent ?? '') !== '')
          .map((t) => ({ text: t.textContent ?? '', px: parseFloat(style(t).fontSize) * scale }));
      }),
    };
  });
}

const applicationStates: Readonly<Record<string, string>> = enums.application_state;
const fund = (r: Row): string => nameOr(r.fund_name ?? null, 'fund', r.fund_id ?? null);
const program = (r: Row): string => nameOr(r.program_name ?? null, 'program', r.program_id ?? null);
const stage = (r: Row): string => nameOr(r.stage_title ?? null, 'stage', r.stage_id ?? null);
const num = (v: CellValue | undefined): number => Number(v ?? 0);
const moneyTotals = (rows: readonly Row[], columns: readonly string[]): string[] =>
  columns.map((c) => formatMoneyTotal(rows.map((r) => r[c] ?? null)));

/** What each table of the model pages must show, computed from the warehouse's own rows. */
async function expectedTables(target: { warehouse: string; schema?: string }): Promise<{
  tables: Record<string, { page: string; rows: string[][]; foot?: string[] }>;
  runs: { runId: string; status: string; startedAt: string; summary?: unknown }[];
  streams: Row[];
  /** The most loaded reviewers as the chart must draw them: one bar per reviewer id. */
  topReviewers: { label: string; assigned: number }[];
  /** Reviewer names that more than one reviewer id carries. */
  sharedNames: string[];
}> {
  const w = await openWarehouse(target.warehouse, { schema: target.schema, logger: silentLogger });
  try {
    const q = (sql: string): Promise<Row[]> => w.query(sql);
    const flow = await q('SELECT * FROM funding_flow ORDER BY fund_id, program_id');
    const funds = await q('SELECT * FROM fund_utilization ORDER BY fund_id');
    const rates = await q('SELECT * FROM award_rates ORDER BY program_id');
    const latency = await q('SELECT * FROM decision_latency ORDER BY program_id');
    const years = await q('SELECT * FROM award_rates_by_year ORDER BY program_id, decision_year');
    const aging = await q('SELECT * FROM stage_aging ORDER BY program_id, stage_id, state');
    const distribution = await q(
      'SELECT assigned, count(*) AS pairs FROM reviewer_load GROUP BY assigned ORDER BY assigned',
    );
    const top = await q(
      'SELECT reviewer_id, max(reviewer_name) AS reviewer_name, sum(assigned) AS assigned, ' +
        'count(DISTINCT program_id) AS programs, count(*) AS stages FROM reviewer_load GROUP BY reviewer_id ' +
        'ORDER BY sum(assigned) DESC, reviewer_id LIMIT 10',
    );
    // A name that more than one reviewer id carries is shown with the id.
    const reviewerNames = await q('SELECT DISTINCT reviewer_id, reviewer_name FROM reviewer_load');
    const named = (r: Row): string => nameOr(r.reviewer_name ?? null, 'reviewer', r.reviewer_id ?? null);
    const shared = (r: Row): boolean => reviewerNames.filter((x) => named(x) === named(r)).length > 1;
    const reviewer = (r: Row): string => (shared(r) ? `${named(r)} (#${String(r.reviewer_id)})` : named(r));
    const progress = await q(
      'SELECT p.*, a.program_name FROM review_progress p LEFT JOIN award_rates a ON a.program_id = p.program_id ' +
        'ORDER BY p.program_id, p.stage_id',
    );
    const funnel = await q(
      'SELECT f.*, a.program_name FROM application_funnel f LEFT JOIN award_rates a ON a.program_id = f.program_id ' +
        'ORDER BY f.program_id, f.stage_order, f.stage_id',
    );
    const streams = await q(`SELECT stream, state FROM ${w.qualify('_grantflow_streams')} ORDER BY stream`);
    const runs = await w.listRuns(10);
    const awarded = rates.reduce((a, r) => a + num(r.awarded), 0);
    const declined = rates.reduce((a, r) => a + num(r.declined), 0);
    const money = ['transferred', 'budget', 'allocated', 'paid', 'balance'];
    const fundMoney = ['deposits', 'withdrawals', 'transferred', 'received', 'balance', 'allocated', 'paid'];
    return {
      runs,
      streams,
      topReviewers: top.map((r) => ({ label: reviewer(r), assigned: num(r.assigned) })),
      sharedNames: [...new Set(reviewerNames.filter(shared).map(named))],
      tables: {
        'funding-flow': {
          page: 'funding',
          rows: flow.map((r) => [
            fund(r),
            program(r),
            formatCount(r.transfers ?? null),
            ...money.map((c) => formatMoney(r[c] ?? null)),
            formatYesNo(r.reconciled ?? null),
          ]),
          foot: [
            'Total',
            '',
            formatCount(flow.reduce((a, r) => a + num(r.transfers), 0)),
            ...moneyTotals(flow, money),
            '',
          ],
        },
        'fund-utilization': {
          page: 'funding',
          rows: funds.map((r) => [
            fund(r),
            ...fundMoney.map((c) => formatMoney(r[c] ?? null)),
            formatPercent(r.utilization_rate ?? null),
            formatYesNo(r.reconciled ?? null),
          ]),
          foot: ['Total', ...moneyTotals(funds, fundMoney), '', ''],
        },
        'award-rates': {
          page: 'awards',
          rows: rates.map((r) => [
            program(r),
            formatCount(r.applications ?? null),
            formatCount(r.awarded ?? null),
            formatCount(r.declined ?? null),
            formatPercent(r.award_rate ?? null),
          ]),
          foot: [
            'All programs',
            formatCount(rates.reduce((a, r) => a + num(r.applications), 0)),
            formatCount(awarded),
            formatCount(declined),
            formatPercent(ratio(awarded, awarded + declined)),
          ],
        },
        'awarded-value': {
          page: 'awards',
          rows: rates.map((r) => [program(r), formatCount(r.awarded ?? null), formatMoney(r.awarded_value ?? null)]),
          foot: ['All programs', formatCount(awarded), formatMoneyTotal(rates.map((r) => r.awarded_value ?? null))],
        },
        'award-rates-by-year': {
          page: 'awards',
          rows: years.map((r) => [
            program(r),
            r.decision_year === null ? 'unknown year' : String(r.decision_year),
            ...['decided', 'awarded', 'declined'].map((c) => formatCount(r[c] ?? null)),
            formatPercent(r.award_rate ?? null),
            formatMoney(r.awarded_value ?? null),
          ]),
        },
        'stage-aging': {
          page: 'pipeline',
          rows: aging.map((r) => [
            `${program(r)} · ${stage(r)}`,
            applicationStates[String(r.state)] ?? 'unknown state',
            formatCount(r.applications ?? null),
            formatCount(r.dated ?? null),
            formatDays(r.median_days ?? null),
            formatDays(r.p90_days ?? null),
          ]),
        },
        'decision-latency': {
          page: 'awards',
          rows: latency.map((r) => [
            program(r),
            formatCount(r.decisions ?? null),
            formatDays(r.median_days ?? null),
            formatDays(r.p90_days ?? null),
            formatDays(r.mean_days ?? null),
          ]),
        },
        'reviewer-load': {
          page: 'reviews',
          rows: distribution.map((r) => [formatCount(r.assigned ?? null), formatCount(r.pairs ?? null)]),
        },
        'top-reviewers': {
          page: 'reviews',
          rows: top.map((r) => [
            reviewer(r),
            formatCount(r.assigned ?? null),
            formatCount(r.programs ?? null),
            formatCount(r.stages ?? null),
          ]),
        },
        'review-progress': {
          page: 'reviews',
          rows: progress.map((r) => [
            program(r),
            stage(r),
            ...['applications', 'reviews_assigned', 'reviews_submitted', 'reviews_completed'].map((c) =>
              formatCount(r[c] ?? null),
            ),
            formatPercent(r.completion_rate ?? null),
            formatCount(r.assignments_listed ?? null),
          ]),
        },
        funnel: {
          page: 'pipeline',
          rows: funnel.map((r) => [
            program(r),
            stage(r),
            ...['stage_order', 'current_applications', 'entered', 'submitted', 'reopened', 'initialized'].map((c) =>
              formatCount(r[c] ?? null),
            ),
            formatPercent(r.conversion_rate ?? null),
          ]),
        },
      },
    };
  } finally {
    await w.close();
  }
}

const summaryOf = (run: { summary?: unknown }): JsonObject => (isJsonObject(run.summary) ? run.summary : {});

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let pg: Awaited<ReturnType<typeof postgresSchema>>;
let browser: Browser;
const targets: Record<string, { warehouse: string; schema?: string; report: string; result?: SyncResult }> = {};

beforeAll(async () => {
  browser = await launch();
  sim = await startSite({ scale: 'tiny', seed: sameNameSeed() });
  dir = await tempDir('grantflow-report-');
  pg = await postgresSchema();
  const credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  // DuckDB: written by the sync itself (the `report` setting).
  targets.duckdb = { warehouse: join(dir.path, 'w.duckdb'), report: join(dir.path, 'report-duckdb') };
  targets.duckdb.result = await syncOnce(sim, {
    credentials,
    warehouse: targets.duckdb.warehouse,
    report: targets.duckdb.report,
  });
  // Postgres: synced, then written by `grantflow report` as a user runs it.
  targets.postgres = { warehouse: pg.url, schema: pg.schema, report: join(dir.path, 'report-postgres') };
  targets.postgres.result = await syncOnce(sim, { credentials, warehouse: pg.url, schema: pg.schema });
  const cli = await runCli(['report', '--warehouse', pg.url, '--schema', pg.schema, '--out', targets.postgres.report]);
  expect(cli.code, cli.stderr).toBe(0);
  expect(cli.stdout).toMatch(/^report written to .*index\.html \(7 pages\)/);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await sim?.close();
  await pg?.drop();
  await dir?.remove();
});

describe.each(['duckdb', 'postgres'])('the report of a %s warehouse', (name) => {
  it('was written: by the sync setting (DuckDB) or the command (Postgres)', () => {
    const t = targets[name]!;
    expect(t.result?.status).toBe('succeeded');
    if (name === 'duckdb') expect(t.result?.after?.lines.join('\n')).toMatch(/report: written to .*index\.html/);
  });

  it.each(pages)('%s loads from a file with no console error, no request, and an SVG for every chart', async (p) => {
    const opened = await open(browser, targets[name]!.report, p, name);
    try {
      expect(opened.consoleErrors).toEqual([]);
      expect(opened.requests).toEqual([]);
      // Each chart is drawn for a desktop and for a phone; the page shows one of them.
      const charts = await opened.page.$$eval('[data-chart]', (els) =>
        els.map((e) => ({
          id: e.getAttribute('data-chart'),
          svgs: [...e.querySelectorAll('svg')].filter((svg) => svg.getClientRects().length > 0).length,
        })),
      );
      for (const c of charts) expect(c.svgs, `chart ${c.id}`).toBe(1);
      // Every figure of a model page is drawn here (the reference site has data for each).
      const expected: Record<string, string[]> = {
        funding: ['funding-flow', 'fund-utilization'],
        awards: ['award-rates', 'awarded-value', 'award-rates-by-year', 'decision-latency'],
        reviews: ['reviewer-load', 'top-reviewers', 'review-progress'],
        pipeline: ['funnel', 'stage-aging'],
        'data-health': ['stream-records'],
      };
      expect(charts.map((c) => c.id)).toEqual(expected[p] ?? []);
      // The nav links every page, relative, so the report works from any folder.
      const links = await opened.page.$$eval('nav a', (as) => as.map((a) => a.getAttribute('href')));
      expect(links).toEqual(pages.map((x) => `${x}.html`));
    } finally {
      await opened.page.close();
    }
  });

  it('shows in every table the numbers of the model rows, formatted', async () => {
    const { tables } = await expectedTables(targets[name]!);
    for (const p of new Set(Object.values(tables).map((t) => t.page))) {
      const opened = await open(browser, targets[name]!.report, p);
      try {
        for (const [id, want] of Object.entries(tables).filter(([, t]) => t.page === p)) {
          expect(want.rows.length, `${id} has rows on the reference site`).toBeGreaterThan(0);
          expect(await tableRows(opened.page, id), id).toEqual(want.rows);
          if (want.foot) expect((await tableRows(opened.page, id, 'tfoot'))[0], `${id} totals`).toEqual(want.foot);
        }
      } finally {
        await opened.page.close();
      }
    }
  });

  it('shows the runs, the data tests and the freshness of each stream on Data health', async () => {
    const { runs, streams } = await expectedTables(targets[name]!);
    const opened = await open(browser, targets[name]!.report, 'data-health');
    try {
      const page = opened.page;
      const runRows = await tableRows(page, 'runs');
      expect(runRows).toEqual(
        runs.map((r) => {
          const s = summaryOf(r);
          const client = isJsonObject(s.client) ? s.client : {};
          const records = (Array.isArray(s.streams) ? s.streams.filter(isJsonObject) : []).reduce(
            (a, x) => a + Number(x.records ?? 0),
            0,
          );
          return [
            r.runId,
            r.status,
            formatTime(r.startedAt),
            formatDuration((s.durationMs as number | undefined) ?? null),
            formatCount((client.requests as number | undefined) ?? null),
            formatCount((client.rateLimited as number | undefined) ?? null),
            formatCount((client.retries as number | undefined) ?? null),
            formatCount(records),
            '',
          ];
        }),
      );
      const last = summaryOf(runs[0]!);
      const streamRows = (Array.isArray(last.streams) ? last.streams.filter(isJsonObject) : []).map((s) => [
        String(s.stream),
        String(s.status),
        formatCount(s.records as number),
        formatCount(s.pages as number),
        formatCount(s.deleted as number),
        formatCount(s.quarantined as number),
        typeof s.reason === 'string' ? s.reason : '',
      ]);
      expect(await tableRows(page, 'stream-records')).toEqual(streamRows);

      // The tests as run now: on the reference site every one passes, and each is listed.
      const w = await openWarehouse(targets[name]!.warehouse, { schema: targets[name]!.schema, logger: silentLogger });
      const tests = await runDataTests(w).finally(() => w.close());
      expect(tests.every((t) => t.status === 'pass')).toBe(true);
      expect(await page.textContent('[data-empty="data-tests"]')).toContain(
        `All ${formatCount(tests.length)} data tests pass`,
      );
      expect(await tableRows(page, 'data-tests-passed')).toEqual(
        tests.map((t) => [t.name, t.severity, 'pass', formatCount(0)]),
      );

      const built = await page.getAttribute('header .meta time', 'datetime');
      expect(Date.parse(built ?? '')).toBeGreaterThan(0);
      expect(await tableRows(page, 'freshness')).toEqual(
        streams.map((r) => {
          const state = JSON.parse(String(r.state)) as Record<string, unknown>;
          const at = typeof state.lastCompleteAt === 'string' ? state.lastCompleteAt : null;
          return [
            String(r.stream),
            formatTime(at),
            at ? formatAge(at, built!) : unknownText,
            formatCount(typeof state.records === 'number' ? state.records : null),
            formatTime(typeof state.lastFullRefreshAt === 'string' ? state.lastFullRefreshAt : null),
          ];
        }),
      );
    } finally {
      await opened.page.close();
    }
  });

  it('draws one bar per reviewer id and tells two reviewers of the same name apart', async () => {
    const { topReviewers, sharedNames } = await expectedTables(targets[name]!);
    // The site has two reviewers of one name, both among the most loaded.
    expect(sharedNames.length).toBeGreaterThan(0);
    const sharing = topReviewers.filter((t) => sharedNames.some((n) => t.label.startsWith(`${n} (#`)));
    expect(sharing.length).toBeGreaterThan(1);
    const opened = await open(browser, targets[name]!.report, 'reviews');
    try {
      const want = topReviewers.map((t) => ({ label: t.label, value: t.assigned }));
      for (const size of ['wide', 'narrow'])
        expect(await chartBars(opened.page, 'top-reviewers', size), size).toEqual(want);
      const labels = want.map((w) => w.label);
      expect(new Set(labels).size).toBe(labels.length);
      expect((await tableRows(opened.page, 'top-reviewers')).map((r) => r[0])).toEqual(labels);
    } finally {
      await opened.page.close();
    }
  });

  it.each([1280, 400])('lays every page out at %i px: nothing wider than the screen, text readable', async (width) => {
    const shots = join(dir.path, 'screenshots');
    await mkdir(shots, { recursive: true });
    for (const p of pages) {
      const opened = await open(browser, targets[name]!.report, p, undefined, width);
      try {
        await opened.page.screenshot({ path: join(shots, `${name}-${width}-${p}.png`), fullPage: true });
        const layout = await layoutOf(opened.page);
        expect(layout.scrollWidth, `${p}: the page scrolls sideways`).toBeLessThanOrEqual(layout.clientWidth);
        for (const c of layout.charts) {
          expect(c.visible, `${p} ${c.id}: one drawing shown`).toBe(1);
          if (width === 400) expect(c.width, `${p} ${c.id}: the screen's width`).toBeCloseTo(c.boxWidth, 0);
        }
        for (const t of layout.tables) {
          expect(t.firstColumn, `${p} ${t.id}: row headers stay in view`).toBe('sticky');
          if (width === 1280) expect(t.scrollWidth, `${p} ${t.id}: cut`).toBeLessThanOrEqual(t.boxWidth);
        }
        if (width === 400) {
          expect(layout.texts.length > 0).toBe(layout.charts.length > 0);
          const small = layout.texts.filter((t) => t.px < 10);
          expect(small, `${p}: chart text under 10 px`).toEqual([]);
        }
      } finally {
        await opened.page.close();
      }
    }
  });

  it('scrolls a table wider than a phone inside its box, its row headers kept in view', async () => {
    const opened = await open(browser, targets[name]!.report, 'funding', undefined, 400);
    try {
      const after = await opened.page.$eval('table[data-table="funding-flow"]', (table) => {
        const box = table.parentElement!;
        const overflows = box.scrollWidth > box.clientWidth;
        box.scrollLeft = box.scrollWidth;
        return {
          overflows,
          scrolled: box.scrollLeft,
          boxLeft: box.getBoundingClientRect().left,
          headerLeft: table.querySelector('tbody tr > :first-child')!.getBoundingClientRect().left,
          second: table.querySelector('tbody tr > :nth-child(2)')!.getBoundingClientRect().left,
        };
      });
      expect(after.overflows).toBe(true);
      expect(after.scrolled).toBeGreaterThan(0);
      expect(after.headerLeft).toBeCloseTo(after.boxLeft, 0);
      // The other cells moved under it.
      expect(after.second).toBeLessThan(after.boxLeft);
    } finally {
      await opened.page.close();
    }
  });

  it('lists every model in the dictionary with the tables its SQL reads', async () => {
    const opened = await open(browser, targets[name]!.report, 'dictionary');
    try {
      const reads = await opened.page.$eval('[data-lineage="award_rates"] dd', (dd) => dd.textContent ?? '');
      expect(reads.split(', ').sort()).toEqual(['applications', 'awards', 'programs']);
      const funding = await opened.page.$eval('[data-lineage="funding_flow"] dd', (dd) => dd.textContent ?? '');
      expect(funding.split(', ').sort()).toEqual(['budgets', 'financial_transactions', 'funds', 'programs']);
      const columns = await tableRows(opened.page, 'dictionary-award_rates');
      expect(columns.map((c) => c[0])).toEqual([
        'program_id',
        'program_name',
        'applications',
        'awarded',
        'declined',
        'award_rate',
        'awarded_value',
      ]);
    } finally {
      await opened.page.close();
    }
  });
});

describe('the report setting', () => {
  it('a report directory that cannot be written stops the sync before it starts (exit 2, one line)', async () => {
    const credentials = await writeCredentials(sim, join(dir.path, 'creds-setting.json'));
    const file = join(dir.path, 'a-file');
    await writeFile(file, 'not a directory');
    const warehouse = join(dir.path, 'setting.duckdb');
    const sync = syncOnce(sim, { credentials, warehouse, report: join(file, 'report') });
    await expect(sync).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^report directory .* is not writable/),
    });
    expect(existsSync(warehouse)).toBe(false);
  });
});

describe('empty states', () => {
  it('a warehouse with no finance data says so, and why, instead of empty charts', async () => {
    const site = await startSite({ scale: 'tiny', seed: 26, features: { financialManagement: false } });
    const here = await tempDir('grantflow-report-nofinance-');
    try {
      const credentials = await writeCredentials(site, join(here.path, 'creds.json'));
      const report = join(here.path, 'report');
      const result = await syncOnce(site, { credentials, warehouse: join(here.path, 'w.duckdb'), report });
      expect(result.status).toBe('succeeded');
      const funding = await open(browser, report, 'funding', 'no-finance');
      try {
        expect(funding.consoleErrors).toEqual([]);
        expect(funding.requests).toEqual([]);
        const text = await funding.page.textContent('[data-empty="finance"]');
        expect(text).toMatch(/No finance data in this warehouse/);
        // Why: the site refused the finance streams, named with the run that was refused them.
        expect(text).toMatch(/funds/);
        expect(text).toContain(result.runId);
        expect(await funding.page.$$('[data-chart]')).toHaveLength(0);
        expect(await funding.page.$$('svg')).toHaveLength(0);
      } finally {
        await funding.page.close();
      }
      const index = await open(browser, report, 'index', 'no-finance');
      try {
        expect(await index.page.textContent('[data-empty="finance"]')).toMatch(/No finance data/);
      } finally {
        await index.page.close();
      }
    } finally {
      await site.close();
      await here.remove();
    }
  }, 120_000);

  it('a failed last run is said on every page, with why, and listed on Data health', async () => {
    const site = await startSite({ scale: 'tiny', seed: 27 });
    // The credentials are revoked a few requests into the second sync: past its preflight (a revocation before it
    // records no run), so the run starts, meets invalid_grant and is recorded as failed.
    let revokeAt = Infinity;
    let seen = 0;
    const proxy = await proxySite(site.url, () => {
      if (++seen === revokeAt) site.control.revokeAllCredentials();
    });
    const here = await tempDir('grantflow-report-failed-');
    try {
      const credentials = await writeCredentials(site, join(here.path, 'creds.json'));
      const warehouse = join(here.path, 'w.duckdb');
      const sync = (): ReturnType<typeof runSync> =>
        runSync({
          settings: settingsSchema.parse({
            site: proxy.url,
            credentials,
            warehouse,
            rate: 1000,
            snapshot: false,
            landRaw: false,
            logLevel: 'silent',
          }),
          logger: silentLogger,
          env: {},
          tty: false,
        });
      expect((await sync()).status).toBe('succeeded');
      revokeAt = seen + 6;
      await expect(sync()).rejects.toThrow(/invalid_grant/);
      const report = join(here.path, 'report');
      const w = await openWarehouse(warehouse, { logger: silentLogger });
      let failedRun: string;
      try {
        const [last] = await w.listRuns(1);
        expect(last?.status).toBe('failed');
        failedRun = last!.runId;
        await writeReport(w, report);
      } finally {
        await w.close();
      }
      for (const p of pages) {
        const opened = await open(browser, report, p, 'failed-run');
        try {
          expect(opened.consoleErrors).toEqual([]);
          expect(opened.requests).toEqual([]);
          const warning = await opened.page.textContent('[data-warning="last-run"]');
          expect(warning, p).toContain(`The last run, ${failedRun}`);
          expect(warning, p).toMatch(/failed: .*invalid_grant/);
          if (p === 'data-health') {
            const [first] = await tableRows(opened.page, 'runs');
            expect(first?.slice(0, 2)).toEqual([failedRun, 'failed']);
            expect(first?.at(-1)).toMatch(/invalid_grant/);
          }
        } finally {
          await opened.page.close();
        }
      }
    } finally {
      await proxy.close();
      await site.close();
      await here.remove();
    }
  }, 120_000);
});
