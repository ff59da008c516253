import { formatCount, formatMoneyTotal, formatPercent, formatTime, ratio } from '../format.ts';
import { empty, esc, page, pages, section, tiles, type PageContext } from '../html.ts';
import type { ReportData } from '../report-data.ts';
import { financeMissingWhy, hasFinanceData } from './common.ts';
import { runStatus } from './data-health.ts';

const sum = (rows: readonly Record<string, unknown>[] | null, column: string): number =>
  (rows ?? []).reduce((a, r) => a + Number(r[column] ?? 0), 0);

const about: Readonly<Record<string, string>> = {
  'funding.html': 'money from each fund to each program, and how much of each fund is allocated and paid',
  'awards.html': 'award rate and awarded value per program and per year, and how long decisions take',
  'reviews.html': 'reviewer load, the most loaded reviewers, and review progress per stage',
  'pipeline.html': 'applications per stage and state: the funnel of each program, and how long they have waited',
  'data-health.html': 'the last syncs, data tests, quarantined records and how fresh each stream is',
  'dictionary.html': 'every table and model with its columns, and which tables each model reads',
};

export function overviewPage(data: ReportData, ctx: PageContext): string {
  const m = data.models;
  const awarded = sum(m.award_rates, 'awarded');
  const declined = sum(m.award_rates, 'declined');
  const finance = hasFinanceData(data);
  const last = data.runs[0] ?? null;
  const items: { label: string; value: string; note?: string }[] = [];
  if (m.award_rates) {
    items.push(
      { label: 'Programs', value: formatCount(m.award_rates.length) },
      { label: 'Applications', value: formatCount(sum(m.award_rates, 'applications')), note: 'not trashed or deleted' },
      {
        label: 'Award rate',
        value: formatPercent(ratio(awarded, awarded + declined)),
        note: `${formatCount(awarded)} awarded of ${formatCount(awarded + declined)} decisions`,
      },
      { label: 'Awarded value', value: formatMoneyTotal((m.award_rates ?? []).map((r) => r.awarded_value ?? null)) },
    );
  }
  if (finance && m.funding_flow)
    items.push({
      label: 'Transferred to programs',
      value: formatMoneyTotal(m.funding_flow.map((r) => r.transferred ?? null)),
    });
  if (finance && m.fund_utilization)
    items.push({ label: "Funds' balance", value: formatMoneyTotal(m.fund_utilization.map((r) => r.balance ?? null)) });
  if (m.review_progress) {
    const assigned = sum(m.review_progress, 'reviews_assigned');
    items.push({
      label: 'Reviews completed',
      value: formatPercent(ratio(sum(m.review_progress, 'reviews_completed'), assigned)),
      note: `of ${formatCount(assigned)} assigned`,
    });
  }
  items.push({
    label: 'Last run',
    value: last ? runStatus(last, data) : 'none',
    note: last ? `started ${formatTime(last.startedAt)}` : 'no sync has run',
  });
  const notes: string[] = [];
  if (!finance && m.funding_flow !== null && m.fund_utilization !== null)
    notes.push(empty('finance', 'No finance data in this warehouse.', financeMissingWhy(data)));
  if (Object.values(m).some((rows) => rows === null))
    notes.push(
      empty(
        'models',
        'Some model tables are not built.',
        ` Missing: ${Object.entries(m)
          .filter(([, rows]) => rows === null)
          .map(([name]) => name)
          .join(', ')}. The syncs so far ran with models off, or a model failed; \`grantflow models run\` builds them.`,
      ),
    );
  const list = pages
    .filter((p) => p.file !== 'index.html')
    .map((p) => `<li><a href="${p.file}">${esc(p.title)}</a>: ${esc(about[p.file] ?? '')}</li>`)
    .join('');
  return page(
    'index.html',
    'Overview',
    'The first questions at a glance. Figures come from the warehouse’s models as of the last sync.',
    `<section aria-label="Headline figures">${tiles(items)}</section>\n${notes.join('\n')}\n${section('pages', 'In this report', '', `<ul>${list}</ul>`)}`,
    ctx,
  );
}
