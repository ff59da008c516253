/**
 * examples/github-actions.yml: a scheduled sync whose only state is the Postgres warehouse, where the rotated
 * credential pair is kept encrypted with GRANTFLOW_STATE_KEY. It passes actionlint, and its grantflow step, run twice
 * on runners that share nothing (no cache, no files), works both times.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { postgresSchema, runCli, startSite, tempDir } from '../support/harness.ts';
import { expectActionlintClean } from '../support/actionlint.ts';

const path = 'examples/github-actions.yml';
const text = readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

interface Step {
  readonly name?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly env?: Record<string, string>;
  readonly with?: Record<string, unknown>;
}
interface Workflow {
  readonly on: Record<string, unknown>;
  readonly permissions?: Record<string, string>;
  readonly concurrency?: { group: string; 'cancel-in-progress': boolean };
  readonly env?: Record<string, string>;
  readonly jobs: Record<string, { env?: Record<string, string>; steps: Step[] }>;
}
const workflow = parse(text) as Workflow;
const job = Object.values(workflow.jobs)[0]!;
const grantflowSteps = job.steps.filter((s) => s.run?.includes('grantflow'));

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe(path, () => {
  it('passes actionlint, which finds a mistake in a broken copy', () => expectActionlintClean(text, path));

  it('reads only the repository, runs one sync at a time, and gives the secrets to the grantflow step alone', () => {
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(workflow.concurrency).toMatchObject({ 'cancel-in-progress': false });
    expect(workflow.concurrency?.group).not.toMatch(/github\.ref|github\.head_ref/);
    // Pull-request runs would hand the secrets to code from the pull request.
    expect(Object.keys(workflow.on).sort()).toEqual(['schedule', 'workflow_dispatch']);
    // The warehouse is the state: the Actions cache holds none of it (npm's downloads at most).
    expect(job.steps.filter((s) => s.uses?.startsWith('actions/cache'))).toEqual([]);
    expect(grantflowSteps).toHaveLength(1);
    const secretsIn = (env: Record<string, string> | undefined) =>
      Object.entries(env ?? {}).filter(([, v]) => v.includes('secrets.'));
    expect(secretsIn(workflow.env)).toEqual([]);
    expect(secretsIn(job.env)).toEqual([]);
    for (const step of job.steps.filter((s) => s !== grantflowSteps[0])) expect(secretsIn(step.env)).toEqual([]);
    // The site is no secret: a plain variable, so the logs that name it stay readable.
    const env = { ...workflow.env, ...job.env, ...grantflowSteps[0]!.env };
    expect(env.GRANTFLOW_SITE).toMatch(/^https:\/\//);
    expect(env.GRANTFLOW_STATE_KEY).toBe('${{ secrets.GRANTFLOW_STATE_KEY }}');
    expect(env.GRANTFLOW_WAREHOUSE).toBe('${{ secrets.GRANTFLOW_WAREHOUSE }}');
  });

  it('is told the same way by every page that names it: nothing of it is cached', () => {
    const pages = ['README.md', ...readdirSync(new URL('../../docs/', import.meta.url)).map((f) => `docs/${f}`)];
    const paragraphs = pages
      .filter((page) => page.endsWith('.md'))
      .flatMap((page) =>
        readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8')
          .split(/\n\s*\n|\n(?=\s*[-*] )/)
          .filter((p) => /github-actions\.yml|GitHub Actions example/.test(p))
          .map((p) => ({ page, text: p.replace(/\s+/g, ' ') })),
      );
    expect(paragraphs.length).toBeGreaterThanOrEqual(2);
    for (const { page, text } of paragraphs) {
      // The example has no cache step (the test above): a page saying it caches the warehouse tells another story.
      expect(`${page}: ${text}`).not.toMatch(/example (caches|keeps)|kept in the Actions cache|(caches|cached) both/);
    }
  });

  it('its grantflow step works twice in a row on runners that share nothing but the warehouse', async () => {
    const sim = await startSite({ scale: 'tiny', seed: 81, latency: { ms: 5 } });
    const pg = await postgresSchema();
    cleanup.push(() => sim.close(), pg.drop);
    const initial = sim.credentials;
    const secrets: Record<string, string> = {
      GRANTFLOW_WAREHOUSE: pg.url,
      GRANTFLOW_STATE_KEY: 'a key kept as a repository secret',
      GRANTFLOW_CLIENT_ID: initial.client_id,
      GRANTFLOW_CLIENT_SECRET: initial.client_secret,
      GRANTFLOW_ACCESS_TOKEN: initial.access_token,
      GRANTFLOW_REFRESH_TOKEN: initial.refresh_token,
    };
    const step = grantflowSteps[0]!;
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries({ ...workflow.env, ...job.env, ...step.env }).map(([k, v]) => [
        k,
        v.replace(/\$\{\{\s*secrets\.(\w+)\s*\}\}/g, (_m, name: string) => {
          const value = secrets[name];
          if (value === undefined) throw new Error(`the test gives no value for secrets.${name}`);
          return value;
        }),
      ]),
    );
    // The site and schema the test owns in place of the example's; the simulator allows a faster pace.
    Object.assign(env, { GRANTFLOW_SITE: sim.url, GRANTFLOW_SCHEMA: pg.schema, GRANTFLOW_RATE: '500' });
    const commands = step.run!.split('\n').filter((l) => l.trim() !== '');
    expect(commands.map((c) => c.split(' ').slice(0, 3).join(' '))).toEqual([
      'npx grantflow doctor',
      'npx grantflow sync',
    ]);

    /** One job on a fresh runner: an empty working directory, removed after (with whatever a cache would hold). */
    const runJob = async (): Promise<string[]> => {
      const runner = await tempDir('grantflow-runner-');
      const outputs: string[] = [];
      try {
        for (const command of commands) {
          const args = command.trim().split(/\s+/).slice(2);
          const r = await runCli(args, { env, cwd: runner.path });
          expect(r.code, `${command}\n${r.stdout}\n${r.stderr}`).toBe(0);
          outputs.push(r.stdout);
        }
        // What the upload step publishes.
        expect(existsSync(join(runner.path, 'data', 'snapshots', '_manifest.json'))).toBe(true);
      } finally {
        await runner.remove();
      }
      return outputs;
    };

    // Each run finds the access token expired, so each must refresh: the second can only use the pair the first
    // stored, the variables' refresh token being used up.
    sim.control.expireAccessTokens();
    const [firstDoctor, firstSync] = await runJob();
    expect(firstSync).toContain('rotations are kept in the warehouse encrypted with GRANTFLOW_STATE_KEY');
    sim.control.expireAccessTokens();
    const [doctor, secondSync] = await runJob();
    // Nothing for doctor to warn about: a Postgres warehouse outlives the runner, and the stored pair is encrypted.
    for (const out of [firstDoctor, doctor]) expect(out).not.toMatch(/^(warn|FAIL) /m);
    expect(doctor).toMatch(/^ok {4}stored pair {2}the pair stored for .* is encrypted and opens with/m);
    expect(secondSync).toMatch(/SUCCEEDED/);
    expect(sim.control.tokenCounts().rotated).toBe(2);
    expect(sim.credentials.refresh_token).not.toBe(initial.refresh_token);
  }, 600_000);
});
