import type { Row } from '../../normalize/table-def.ts';
import { barSpec, histogramSpec, renderChart } from '../charts.ts';
import { formatCount, formatPercent, nameOr } from '../format.ts';
import { empty, figure, page, table, type PageContext } from '../html.ts';
import type { ReportData } from '../report-data.ts';
import { modelMissing, programName, programNames } from './common.ts';

/** How many reviewers the "most loaded" figure lists. */
export const topReviewerCount = 10;

/** Reviewer-stage pairs per number of assignments: the distribution of reviewer load. */
export function loadDistribution(rows: readonly Row[]): { assigned: number; pairs: number }[] {
  const counts = new Map<number, number>();
  for (const r of rows) counts.set(Number(r.assigned), (counts.get(Number(r.assigned)) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([assigned, pairs]) => ({ assigned, pairs }));
}

export interface ReviewerTotal {
  readonly reviewerId: string;
  /** The reviewer's name, with the id after it when another reviewer has the same name: "Chloé Smith (#12)". */
  readonly name: string;
  readonly assigned: number;
  readonly programs: number;
  readonly stages: number;
}

/**
 * Each reviewer's assignments over every program and stage, most loaded first (then by id). Totals are per reviewer
 * id, and two people of the same name are told apart by their ids, in the chart's bars as in the table.
 */
export function reviewerTotals(rows: readonly Row[]): ReviewerTotal[] {
  const by = new Map<string, { name: string; assigned: number; programs: Set<string>; stages: number }>();
  for (const r of rows) {
    const id = String(r.reviewer_id);
    const t = by.get(id) ?? {
      name: nameOr(r.reviewer_name ?? null, 'reviewer', r.reviewer_id ?? null),
      assigned: 0,
      programs: new Set<string>(),
      stages: 0,
    };
    t.assigned += Number(r.assigned);
    t.programs.add(String(r.program_id));
    t.stages += 1;
    by.set(id, t);
  }
  const sharing = new Map<string, number>();
  for (const t of by.values()) sharing.set(t.name, (sharing.get(t.name) ?? 0) + 1);
  return [...by.entries()]
    .map(([reviewerId, t]) => ({
      reviewerId,
      name: (sharing.get(t.name) ?? 0) > 1 ? `${t.name} (#${reviewerId})` : t.name,
      assigned: t.assigned,
      programs: t.programs.size,
      stages: t.stages,
    }))
    .sort((a, b) => b.assigned - a.assigned || Number(a.reviewerId) - Number(b.reviewerId));
}

export async function reviewsPage(data: ReportData, ctx: PageContext): Promise<string> {
  const load = data.models.reviewer_load;
  const progress = data.models.review_progress;
  const names = programNames(data);
  const parts: string[] = [];
  if (load === null) parts.push(modelMissing('reviewer_load'));
  else if (load.length === 0)
    parts.push(
      empty('reviewer-load', 'No reviewer assignments.', ' The site lists no reviewer assigned to an application.'),
    );
  else {
    const distribution = loadDistribution(load);
    parts.push(
      figure(
        'reviewer-load',
        'Reviewer load',
        `How many assignments each reviewer has in each program and stage: ${formatCount(load.length)} reviewer-stage ` +
          `pairs, ${formatCount(new Set(load.map((r) => String(r.reviewer_id))).size)} reviewers. A long tail to the ` +
          'right means a few reviewers carry much of a stage.',
        await renderChart(
          histogramSpec({
            description: 'Distribution of assignments per reviewer per program and stage.',
            values: distribution.map((d) => ({ value: d.assigned, count: d.pairs })),
            valueTitle: 'Assignments of a reviewer in a program and stage',
            countTitle: 'Reviewer-stage pairs',
          }),
        ),
        table({
          id: 'reviewer-load',
          caption: 'Reviewer-stage pairs by number of assignments',
          columns: [
            { label: 'Assignments', numeric: true },
            { label: 'Reviewer-stage pairs', numeric: true },
          ],
          rows: distribution.map((d) => [formatCount(d.assigned), formatCount(d.pairs)]),
        }),
      ),
    );
    const top = reviewerTotals(load).slice(0, topReviewerCount);
    parts.push(
      figure(
        'top-reviewers',
        'Most loaded reviewers',
        `The ${top.length} reviewers with the most assignments over every program and stage.`,
        await renderChart(
          barSpec({
            description: 'Reviewers with the most assignments.',
            values: top.map((t) => ({ label: t.name, value: t.assigned })),
            labelTitle: 'Reviewer',
            valueTitle: 'Assignments',
          }),
        ),
        table({
          id: 'top-reviewers',
          caption: 'Most loaded reviewers',
          columns: [
            { label: 'Reviewer' },
            { label: 'Assignments', numeric: true },
            { label: 'Programs', numeric: true },
            { label: 'Program stages', numeric: true },
          ],
          rows: top.map((t) => [t.name, formatCount(t.assigned), formatCount(t.programs), formatCount(t.stages)]),
        }),
      ),
    );
  }
  if (progress === null) parts.push(modelMissing('review_progress'));
  else if (progress.length === 0)
    parts.push(empty('review-progress', 'No stage records.', ' No application has entered a stage yet.'));
  else {
    const measures = [
      ['reviews_assigned', 'Assigned'],
      ['reviews_submitted', 'Submitted'],
      ['reviews_completed', 'Completed'],
    ] as const;
    parts.push(
      figure(
        'review-progress',
        'Review progress per stage',
        'Reviews assigned, submitted and completed in each stage, from the stage records of applications (trashed ' +
          'and deleted applications left out). Completion is completed / assigned.',
        await renderChart(
          barSpec({
            description: 'Reviews assigned, submitted and completed per program stage.',
            values: progress.flatMap((r) =>
              measures.map(([c, label]) => ({
                group: programName(names, r.program_id),
                label: nameOr(r.stage_title ?? null, 'stage', r.stage_id ?? null),
                series: label,
                value: Number(r[c] ?? 0),
              })),
            ),
            labelTitle: 'Program',
            valueTitle: 'Reviews',
            seriesTitle: 'Reviews',
            grouped: true,
          }),
        ),
        table({
          id: 'review-progress',
          caption: 'Review progress per program and stage',
          columns: [
            { label: 'Program' },
            { label: 'Stage' },
            { label: 'Applications', numeric: true },
            { label: 'Assigned', numeric: true },
            { label: 'Submitted', numeric: true },
            { label: 'Completed', numeric: true },
            { label: 'Completion', numeric: true },
            { label: 'Assignments listed', numeric: true },
          ],
          rows: progress.map((r) => [
            programName(names, r.program_id),
            nameOr(r.stage_title ?? null, 'stage', r.stage_id ?? null),
            formatCount(r.applications ?? null),
            formatCount(r.reviews_assigned ?? null),
            formatCount(r.reviews_submitted ?? null),
            formatCount(r.reviews_completed ?? null),
            formatPercent(r.completion_rate ?? null),
            formatCount(r.assignments_listed ?? null),
          ]),
        }),
      ),
    );
  }
  return page(
    'reviews.html',
    'Reviews',
    'Who reviews how much, and how far the reviews of each stage have got.',
    parts.join('\n'),
    ctx,
  );
}
