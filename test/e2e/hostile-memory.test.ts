/**
 * Issue 44's acceptance: against a site whose every page adds hundreds of new long field names along an endless
 * `next` chain, `grantflow sync --max-duration` stays under 1 GB of RSS and ends with its summary (exit 0 paused or 1
 * failed), on DuckDB and on Postgres. The process is the subject: the CLI runs as a child, its peak RSS read from
 * /proc (VmHWM) while it runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresSchema, runCli, siteWithWarehouse, syncCliArgs } from '../support/harness.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** Peak resident set of a live process, in bytes (0 once it is gone). */
function peakRss(pid: number): number {
  try {
    const line = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line ? Number(line[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

const targets: { name: string; warehouse: (dir: string) => Promise<string[]> }[] = [
  { name: 'DuckDB', warehouse: (dir) => Promise.resolve(['--warehouse', join(dir, 'w.duckdb')]) },
  {
    name: 'Postgres',
    warehouse: async () => {
      const pg = await postgresSchema();
      cleanup.push(pg.drop);
      return ['--warehouse', pg.url, '--schema', pg.schema];
    },
  },
];

describe.each(targets)('$name: a sync against an endless list of ever new field names', ({ warehouse }) => {
  it('stays under 1 GB and ends at its budget with its summary', async () => {
    // 100 records a page, each with 500 new names of 100 characters: 5 MB of new names a page, without end.
    const site = await siteWithWarehouse({
      scale: 'tiny',
      seed: 48,
      hostile: { endless: { template: '/api/applications/', newFields: 500, fieldChars: 100 } },
    });
    cleanup.push(site.remove);
    let peak = 0;
    let sampler: NodeJS.Timeout | undefined;
    const r = await runCli(
      [
        ...syncCliArgs(site.sim.url, site.dir, { credentials: site.credentials, warehouse: await warehouse(site.dir) }),
        '--models',
        'false',
        '--max-duration',
        '15s',
      ],
      {
        // A run still going long after its budget is what this test catches: it is killed and fails.
        timeoutMs: 120_000,
        onSpawn: (child) => {
          const pid = child.pid!;
          sampler = setInterval(() => (peak = Math.max(peak, peakRss(pid))), 200);
          child.once('exit', () => clearInterval(sampler));
        },
      },
    );
    clearInterval(sampler);
    expect(r.signal, r.stderr.slice(-2000)).toBeNull();
    expect([0, 1]).toContain(r.code);
    expect(r.stdout).toMatch(/^grantflow run \S+: (PAUSED|PARTIAL|FAILED) in /m);
    expect(r.stdout).toMatch(/^ {2}applications +interrupted /m);
    // Said once, in one line.
    expect(r.stdout.match(/schema drift beyond the catalog's bounds/g)).toHaveLength(1);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(1024 ** 3);
  }, 180_000);
});
