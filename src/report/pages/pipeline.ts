import { barSpec, renderChart } from '../charts.ts';
import { formatCount, formatPercent, nameOr } from '../format.ts';
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
  return page(
    'pipeline.html',
    'Pipeline',
    'Where the applications are: each program’s stages, how many entered them and in which state.',
    parts.join('\n'),
    ctx,
  );
}
