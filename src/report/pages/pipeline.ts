import { barSpec, renderChart } from '../charts.ts';
import { enums } from '../../normalize/enums.ts';
import { formatCount, formatDays, formatPercent, nameOr } from '../format.ts';
import { empty, figure, page, table, type PageContext } from '../html.ts';
import type { ReportData } from '../report-data.ts';
import { modelMissing, programName, programNames } from './common.ts';

export async function pipelinePage(data: ReportData, ctx: PageContext): Promise<string> {
  const funnel = data.models.application_funnel;
  const names = programNames(data);
  const parts: string[] = [];
  if (funnel === null) parts.push(modelMissing('application_funnel'));
  else if (funnel.length === 0)
    parts.push(
      empty('funnel', 'No applications in any stage.', ' No live application has a stage or a stage record yet.'),
    );
  else {
    const states = [
      ['submitted', 'Submitted'],
      ['reopened', 'Reopened'],
      ['initialized', 'Initialized'],
    ] as const;
    parts.push(
      figure(
        'funnel',
        'Applications per stage and state',
        "Each program's stages in the order applications first entered them. The bars count the stage records in each " +
          'state; "Now in stage" counts the applications whose current stage it is, and conversion is the share of ' +
          'the applications of the stage before that entered this one too.',
        await renderChart(
          barSpec({
            description: 'Stage records per program stage, stacked by state (the funnel).',
            values: funnel.flatMap((r) =>
              states.map(([c, label]) => ({
                group: programName(names, r.program_id),
                label: nameOr(r.stage_title ?? null, 'stage', r.stage_id ?? null),
                series: label,
                value: Number(r[c] ?? 0),
              })),
            ),
            labelTitle: 'Program',
            valueTitle: 'Stage records',
            seriesTitle: 'State',
          }),
        ),
        table({
          id: 'funnel',
          caption: 'The funnel: applications per stage and state',
          columns: [
            { label: 'Program' },
            { label: 'Stage' },
            { label: 'Order', numeric: true },
            { label: 'Now in stage', numeric: true },
            { label: 'Entered', numeric: true },
            { label: 'Submitted', numeric: true },
            { label: 'Reopened', numeric: true },
            { label: 'Initialized', numeric: true },
            { label: 'Conversion', numeric: true },
          ],
          rows: funnel.map((r) => [
            programName(names, r.program_id),
            nameOr(r.stage_title ?? null, 'stage', r.stage_id ?? null),
            formatCount(r.stage_order ?? null),
            formatCount(r.current_applications ?? null),
            formatCount(r.entered ?? null),
            formatCount(r.submitted ?? null),
            formatCount(r.reopened ?? null),
            formatCount(r.initialized ?? null),
            formatPercent(r.conversion_rate ?? null),
          ]),
        }),
      ),
    );
  }
  parts.push(await agingFigure(data));
  return page(
    'pipeline.html',
    'Pipeline',
    'Where the applications are: each program’s stages, how many entered them and in which state.',
    parts.join('\n'),
    ctx,
  );
}

const stateLabels: Readonly<Record<string, string>> = enums.application_state;

/** How long the applications of each program, stage and state have waited in their stage (stage_aging). */
async function agingFigure(data: ReportData): Promise<string> {
  const aging = data.models.stage_aging;
  if (aging === null) return modelMissing('stage_aging');
  if (aging.length === 0)
    return empty('stage-aging', 'No application is waiting in a stage.', ' No live application has a current stage.');
  const stage = (r: (typeof aging)[number]): string =>
    `${nameOr(r.program_name ?? null, 'program', r.program_id ?? null)} · ${nameOr(r.stage_title ?? null, 'stage', r.stage_id ?? null)}`;
  const state = (r: (typeof aging)[number]): string =>
    r.state === null || r.state === undefined
      ? 'unknown state'
      : (stateLabels[String(r.state)] ?? `state ${String(r.state)}`);
  const svg = await renderChart(
    barSpec({
      description: 'Median days the applications of each program stage have waited in it, per application state.',
      values: aging
        .filter((r) => r.median_days !== null && r.median_days !== undefined)
        .map((r) => ({ label: stage(r), series: state(r), value: Number(r.median_days) })),
      labelTitle: 'Program · stage',
      valueTitle: 'Median days in the stage',
      seriesTitle: 'Application state',
      grouped: true,
    }),
  );
  const asOf = aging[0]?.as_of;
  return figure(
    'stage-aging',
    'Time in the current stage',
    'Days since the applications entered the stage they are in now, counted to when the sync read them' +
      (typeof asOf === 'string' ? ` (${asOf.slice(0, 16).replace('T', ' ')} UTC)` : '') +
      ', per program, stage and application state. "Dated" counts those whose stage record says when they entered; ' +
      'trashed and deleted applications are left out.',
    svg,
    table({
      id: 'stage-aging',
      caption: 'Applications per stage and state, and the days they have waited there',
      columns: [
        { label: 'Program · stage' },
        { label: 'State' },
        { label: 'Applications', numeric: true },
        { label: 'Dated', numeric: true },
        { label: 'Median days', numeric: true },
        { label: '90th percentile', numeric: true },
      ],
      rows: aging.map((r) => [
        stage(r),
        state(r),
        formatCount(r.applications ?? null),
        formatCount(r.dated ?? null),
        formatDays(r.median_days ?? null),
        formatDays(r.p90_days ?? null),
      ]),
    }),
  );
}
