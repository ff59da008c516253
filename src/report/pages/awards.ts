import { barSpec, renderChart } from '../charts.ts';
import { formatCount, formatDays, formatMoney, formatMoneyTotal, formatPercent, nameOr, ratio } from '../format.ts';
import { empty, figure, page, table, type PageContext } from '../html.ts';
import type { ReportData } from '../report-data.ts';
import { modelMissing } from './common.ts';

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export async function awardsPage(data: ReportData, ctx: PageContext): Promise<string> {
  const rates = data.models.award_rates;
  const latency = data.models.decision_latency;
  const parts: string[] = [];
  if (rates === null) parts.push(modelMissing('award_rates'));
  else if (rates.length === 0)
    parts.push(
      empty('awards', 'No programs in this warehouse.', ' The site has no programs, so there is nothing to award.'),
    );
  else {
    const program = (r: (typeof rates)[number]): string =>
      nameOr(r.program_name ?? null, 'program', r.program_id ?? null);
    const awarded = rates.reduce((a, r) => a + num(r.awarded), 0);
    const declined = rates.reduce((a, r) => a + num(r.declined), 0);
    const rateSvg = await renderChart(
      barSpec({
        description: 'Award rate of each program: awarded decisions as a share of all decisions.',
        values: rates
          .filter((r) => r.award_rate !== null)
          .map((r) => ({ label: program(r), value: num(r.award_rate) })),
        labelTitle: 'Program',
        valueTitle: 'Award rate',
        format: '.0%',
      }),
    );
    parts.push(
      figure(
        'award-rates',
        'Award rate per program',
        'Awarded decisions as a share of all decisions (awarded + declined), with the counts behind each rate. ' +
          'Trashed and deleted applications are left out; a program without decisions has no rate (—) and no bar.',
        rateSvg,
        table({
          id: 'award-rates',
          caption: 'Award rate and the counts behind it',
          columns: [
            { label: 'Program' },
            { label: 'Applications', numeric: true },
            { label: 'Awarded', numeric: true },
            { label: 'Declined', numeric: true },
            { label: 'Award rate', numeric: true },
          ],
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
        }),
      ),
    );
    const valueSvg = await renderChart(
      barSpec({
        description: 'Total value of the awarded decisions of each program.',
        values: rates.map((r) => ({ label: program(r), value: num(r.awarded_value) })),
        labelTitle: 'Program',
        valueTitle: 'Awarded value',
      }),
    );
    parts.push(
      figure(
        'awarded-value',
        'Awarded value per program',
        'The sum of the values of awarded decisions. — marks a total the warehouse does not know: an awarded value ' +
          'that is missing or unreadable.',
        valueSvg,
        table({
          id: 'awarded-value',
          caption: 'Awarded value',
          columns: [
            { label: 'Program' },
            { label: 'Awarded', numeric: true },
            { label: 'Awarded value', numeric: true },
          ],
          rows: rates.map((r) => [program(r), formatCount(r.awarded ?? null), formatMoney(r.awarded_value ?? null)]),
          foot: ['All programs', formatCount(awarded), formatMoneyTotal(rates.map((r) => r.awarded_value ?? null))],
        }),
      ),
    );
  }
  parts.push(await byYearFigure(data));
  if (latency === null) parts.push(modelMissing('decision_latency'));
  else if (latency.some((r) => num(r.decisions) > 0)) {
    const program = (r: (typeof latency)[number]): string =>
      nameOr(r.program_name ?? null, 'program', r.program_id ?? null);
    const svg = await renderChart(
      barSpec({
        description: 'Days from the last submission to the decision: median and 90th percentile per program.',
        values: latency
          .filter((r) => num(r.decisions) > 0)
          .flatMap((r) => [
            { label: program(r), series: 'Median', value: num(r.median_days) },
            { label: program(r), series: '90th percentile', value: num(r.p90_days) },
          ]),
        labelTitle: 'Program',
        valueTitle: 'Days',
        seriesTitle: 'Days to decision',
        grouped: true,
      }),
    );
    parts.push(
      figure(
        'decision-latency',
        'Decision latency',
        "Days from an application's last submission to its award decision.",
        svg,
        table({
          id: 'decision-latency',
          caption: 'Days from last submission to decision',
          columns: [
            { label: 'Program' },
            { label: 'Decisions', numeric: true },
            { label: 'Median days', numeric: true },
            { label: '90th percentile', numeric: true },
            { label: 'Mean days', numeric: true },
          ],
          rows: latency.map((r) => [
            program(r),
            formatCount(r.decisions ?? null),
            formatDays(r.median_days ?? null),
            formatDays(r.p90_days ?? null),
            formatDays(r.mean_days ?? null),
          ]),
        }),
      ),
    );
  } else if (rates === null || rates.length > 0)
    parts.push(
      empty(
        'decision-latency',
        'No decisions to time yet.',
        ' No award decision has both a last submission and a decision time.',
      ),
    );
  return page(
    'awards.html',
    'Awards',
    'How often each program says yes, what it has awarded, and how long decisions take.',
    parts.join('\n'),
    ctx,
  );
}

/** Award rate and awarded value of each program per year of the decision (award_rates_by_year). */
async function byYearFigure(data: ReportData): Promise<string> {
  const years = data.models.award_rates_by_year;
  if (years === null) return modelMissing('award_rates_by_year');
  if (years.length === 0)
    return empty('award-rates-by-year', 'No decisions yet.', ' No live application has an award decision.');
  const program = (r: (typeof years)[number]): string =>
    nameOr(r.program_name ?? null, 'program', r.program_id ?? null);
  const year = (r: (typeof years)[number]): string =>
    r.decision_year === null || r.decision_year === undefined ? 'unknown year' : String(r.decision_year);
  const svg = await renderChart(
    barSpec({
      description: 'Award rate of each program per year of the decision.',
      values: years.map((r) => ({ label: year(r), series: program(r), value: num(r.award_rate) })),
      labelTitle: 'Year of the decision',
      valueTitle: 'Award rate',
      seriesTitle: 'Program',
      grouped: true,
      format: '.0%',
    }),
  );
  return figure(
    'award-rates-by-year',
    'Award rate per program and year',
    'The decisions of each year (in UTC, of the decision time: when awarded, else when the award was made), with ' +
      'the awarded value. Trashed and deleted applications are left out; a decision with no time is in "unknown year".',
    svg,
    table({
      id: 'award-rates-by-year',
      caption: 'Decisions, award rate and awarded value per program and year',
      columns: [
        { label: 'Program' },
        { label: 'Year' },
        { label: 'Decided', numeric: true },
        { label: 'Awarded', numeric: true },
        { label: 'Declined', numeric: true },
        { label: 'Award rate', numeric: true },
        { label: 'Awarded value', numeric: true },
      ],
      rows: years.map((r) => [
        program(r),
        year(r),
        formatCount(r.decided ?? null),
        formatCount(r.awarded ?? null),
        formatCount(r.declined ?? null),
        formatPercent(r.award_rate ?? null),
        formatMoney(r.awarded_value ?? null),
      ]),
    }),
  );
}
