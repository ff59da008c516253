/**
 * examples/github-actions-portfolio.yml: one job per site of a portfolio into one shared Postgres. It passes
 * actionlint, gives each job only its own site's credentials, and its grantflow step hands them to grantflow under
 * the names grantflow reads for that site (config/portfolio.ts).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { siteCredentialVariable } from '../../src/config/portfolio.ts';
import { tempDir } from '../support/harness.ts';
import { expectActionlintClean } from '../support/actionlint.ts';

const path = 'examples/github-actions-portfolio.yml';
const text = readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

interface Step {
  readonly run?: string;
  readonly uses?: string;
  readonly env?: Record<string, string>;
}
interface Job {
  readonly strategy: { 'fail-fast': boolean; matrix: { include: { site: string; secrets: string }[] } };
  readonly concurrency: { group: string };
  readonly steps: Step[];
}
const workflow = parse(text) as { on: Record<string, unknown>; jobs: Record<string, Job> };
const job = Object.values(workflow.jobs)[0]!;
const sites = job.strategy.matrix.include;
const step = job.steps.find((s) => s.run?.includes('grantflow sync'))!;
const credentialKeys = ['client_id', 'client_secret', 'access_token', 'refresh_token'];

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe(path, () => {
  it('passes actionlint, which finds a mistake in a broken copy', () => expectActionlintClean(text, path));

  it('runs a job per site, each alone per site, none cancelled by another, never for pull requests', () => {
    expect(sites.length).toBeGreaterThan(1);
    expect(job.strategy['fail-fast']).toBe(false);
    expect(job.concurrency.group).toContain('matrix.site');
    expect(Object.keys(workflow.on).sort()).toEqual(['schedule', 'workflow_dispatch']);
    for (const s of job.steps.filter((x) => x !== step)) expect(JSON.stringify(s.env ?? {})).not.toContain('secrets');
  });

  it("hands each job's credentials to grantflow under the names it reads for that site", async () => {
    const dir = await tempDir('grantflow-gha-portfolio-');
    cleanup.push(dir.remove);
    // `npx` stands in for grantflow: it writes down the GRANTFLOW_* variables each command sees.
    const seen = join(dir.path, 'seen.json');
    const npx = join(dir.path, 'npx');
    writeFileSync(
      npx,
      `#!/usr/bin/env node\nconst fs = require('node:fs');\nconst env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('GRANTFLOW_')));\nfs.appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ args: process.argv.slice(2), env }) + '\\n');\n`,
    );
    chmodSync(npx, 0o755);
    for (const site of sites) {
      writeFileSync(seen, '');
      // The step's env as Actions would set it, each secret given a value of its own.
      const secret = (key: string): string => `${site.site}-${key}-value`;
      const env: Record<string, string> = { PATH: `${dir.path}:${process.env.PATH ?? ''}` };
      for (const [name, value] of Object.entries(step.env ?? {})) {
        const key = /secrets\[format\('GRANTFLOW_\{0\}_([A-Z_]+)', matrix\.secrets\)\]/.exec(value)?.[1];
        env[name] = key
          ? secret(key.toLowerCase())
          : value.replace('${{ matrix.site }}', site.site).replace('${{ matrix.secrets }}', site.secrets);
      }
      execFileSync('bash', ['-e', '-c', step.run!], { env, cwd: dir.path });
      const calls = readFileSync(seen, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { args: string[]; env: Record<string, string> });
      expect(calls.map((c) => c.args)).toEqual([
        ['grantflow', 'doctor', '--sites', site.site],
        ['grantflow', 'sync', '--sites', site.site],
      ]);
      for (const call of calls)
        for (const key of credentialKeys) expect(call.env[siteCredentialVariable(site.site, key)]).toBe(secret(key));
    }
  });
});
