/**
 * Issue 44: what the local machine can leave open around a sync (a credentials file others may read, an object
 * store over plain http, certificate checks switched off, a password on the command line) is refused or warned of.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { chmod } from 'node:fs/promises';
import { siteWithWarehouse, syncCliArgs } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { postgresUrl } from '../support/postgres.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo();
});

/** The smallest sync: one stream, no models, no landed pages. */
const small = ['--models', 'false', '--land-raw', 'false', '--streams', 'programs'];

describe('local hardening', () => {
  it('sync warns once about a credentials file others may read, and the run goes on', async () => {
    const { sim, dir, credentials, remove } = await siteWithWarehouse();
    cleanup.push(remove);
    await chmod(credentials, 0o644);
    const result = await runCliInProcess([...syncCliArgs(sim.url, dir), ...small]);
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n').filter((l) => l.includes('other users may read'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(credentials);
    expect(lines[0]).toMatch(/warn|"level":40/i);
  });

  it('sync refuses a plain-http object store endpoint on another host, before any request to it', async () => {
    const { sim, dir, remove } = await siteWithWarehouse();
    cleanup.push(remove);
    const args = [...syncCliArgs(sim.url, dir, { snapshot: true }), ...small, '--snapshots', 's3://bucket/x'];
    const env = { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' };
    const remote = await runCliInProcess(args, {
      env: { ...env, AWS_ENDPOINT_URL: 'http://store.example.invalid:9000' },
    });
    expect(remote.code).toBe(2);
    expect(remote.stderr.trim().split('\n')).toEqual([expect.stringContaining('AWS_ENDPOINT_URL')]);
    expect(remote.stderr).toContain('https://');
  });

  it('sync refuses to run with certificate checks off unless told to', async () => {
    const { sim, dir, remove } = await siteWithWarehouse();
    cleanup.push(remove);
    const args = [...syncCliArgs(sim.url, dir), ...small];
    const env = { NODE_TLS_REJECT_UNAUTHORIZED: '0' };
    const refused = await runCliInProcess(args, { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringContaining('NODE_TLS_REJECT_UNAUTHORIZED')]);
    const allowed = await runCliInProcess([...args, '--allow-insecure-tls'], { env });
    expect(allowed.code).toBe(0);
  });

  it('doctor warns about certificate checks off and a password in --warehouse on the command line', async () => {
    const { sim, dir, remove } = await siteWithWarehouse();
    cleanup.push(remove);
    const doctor = (extra: string[], env: NodeJS.ProcessEnv = {}) =>
      runCliInProcess(['doctor', ...syncCliArgs(sim.url, dir).slice(1), ...small, ...extra], { env });
    const exposure = (stdout: string) => stdout.split('\n').find((l) => /\bexposure\b/.test(l)) ?? '';

    const clean = await doctor([]);
    expect(exposure(clean.stdout)).toMatch(/^ok/i);

    const tls = await doctor([], { NODE_TLS_REJECT_UNAUTHORIZED: '0' });
    expect(exposure(tls.stdout)).toMatch(/^warn.*NODE_TLS_REJECT_UNAUTHORIZED/i);

    const url = new URL(postgresUrl);
    url.password = 'not-a-real-one';
    const withPassword = await doctor(['--warehouse', url.href, '--schema', 'hostile_local']);
    expect(exposure(withPassword.stdout)).toMatch(/^warn.*--warehouse holds a password.*PGPASSWORD/i);
    expect(withPassword.stdout + withPassword.stderr).not.toContain('not-a-real-one');
  });
});
