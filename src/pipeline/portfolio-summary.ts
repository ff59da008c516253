import type { PortfolioResult } from './portfolio.ts';
import { formatSummary } from './summary.ts';

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
  const lines = [
    `grantflow portfolio: ${p.sites.length} site${p.sites.length === 1 ? '' : 's'}, ${failed === 0 ? 'all succeeded' : `${failed} did not succeed`} in ${(p.durationMs / 1000).toFixed(1)} s (exit ${p.exitCode})`,
    '',
    `  ${'site'.padEnd(16)} ${'status'.padEnd(12)} ${'exit'.padStart(4)} ${'records'.padStart(9)} ${'requests'.padStart(9)}  notes`,
  ];
  for (const o of p.sites) {
    const r = o.result;
    const status = r ? r.status.toUpperCase() : 'FAILED';
    const records = r ? String(r.streams.reduce((a, s) => a + s.records, 0)) : '-';
    const requests = r ? String(r.client.requests) : '-';
    const notes = [...(r ? [`run ${r.runId}`] : []), ...(o.error ? [o.error] : [])].join('; ');
    lines.push(
      `  ${o.site.name.padEnd(16)} ${status.padEnd(12)} ${String(o.exitCode).padStart(4)} ${records.padStart(9)} ${requests.padStart(9)}  ${notes}`,
    );
  }
  for (const l of p.lines) lines.push(`  ${l}`);
  parts.push(lines.join('\n') + '\n');
  return parts.join('\n');
}
