import type { PortfolioResult } from './portfolio.ts';
import { formatSummary } from './summary.ts';
import { renderTable, type TableColumn } from '../util/text-table.ts';

const siteColumns: readonly TableColumn[] = [
  { header: 'site' },
  { header: 'status' },
  { header: 'exit', align: 'right' },
  { header: 'records', align: 'right' },
  { header: 'requests', align: 'right' },
  { header: 'notes', align: 'left' },
];

/**
 * The end-of-run report of a portfolio (stdout): each site's own summary under its name, then one line per site and
 * the portfolio's views and snapshot.
 */
export function formatPortfolioSummary(p: PortfolioResult): string {
  const parts: string[] = [];
  for (const o of p.sites) {
    if (!o.result) continue;
    const extra = [...(o.result.after?.lines ?? []), ...(o.error ? [o.error] : [])];
    parts.push(`site ${o.site.name} (${o.site.site})\n${formatSummary({ ...o.result, extra })}`);
  }
  const failed = p.sites.filter((o) => o.exitCode !== 0).length;
  const rows = p.sites.map((o) => {
    const r = o.result;
    return [
      o.site.name,
      r ? r.status.toUpperCase() : 'FAILED',
      o.exitCode,
      r ? r.streams.reduce((a, s) => a + s.records, 0) : '-',
      r ? r.client.requests : '-',
      [...(r ? [`run ${r.runId}`] : []), ...(o.error ? [o.error] : [])].join('; '),
    ];
  });
  const lines = [
    `grantflow portfolio: ${p.sites.length} site${p.sites.length === 1 ? '' : 's'}, ${failed === 0 ? 'all succeeded' : `${failed} did not succeed`} in ${(p.durationMs / 1000).toFixed(1)} s (exit ${p.exitCode})`,
    '',
    ...renderTable(siteColumns, rows, { indent: 2 }),
  ];
  for (const l of p.lines) lines.push(`  ${l}`);
  parts.push(lines.join('\n') + '\n');
  return parts.join('\n');
}
