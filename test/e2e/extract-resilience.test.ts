/**
 * Issue 3 acceptance: short-lived tokens are refreshed and the file always holds a working pair, also when the
 * process is killed right after a refresh; with 5 % injected faults a sync equals a fault-free one.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import {
  dumpWarehouse,
  referenceDump,
  runCli,
  startSite,
  summarize,
  syncOnce,
  tempDir,
  writeCredentials,
  syncCliArgs,
} from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function site(options: Parameters<typeof startSite>[0]): Promise<{ sim: SimulatorHandle; dir: string }> {
  const sim = await startSite(options);
  const dir = await tempDir();
  cleanup.push(() => sim.close(), dir.remove);
  return { sim, dir: dir.path };
}

/** A refresh with the pair on disk succeeds: the file holds a working refresh token. */
async function refreshWorks(sim: SimulatorHandle, file: string): Promise<boolean> {
  const c = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
  const res = await fetch(`${sim.url}/api/o/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: c.client_id!,
      client_secret: c.client_secret!,
      refresh_token: c.refresh_token!,
    }),
  });
  const body = (await res.json()) as Record<string, string>;
  if (res.status !== 200) return false;
  // Put the rotated pair back, as grantflow would, so the file keeps working for the next step.
  const { writeFile } = await import('node:fs/promises');
  await writeFile(file, JSON.stringify({ ...c, access_token: body.access_token, refresh_token: body.refresh_token }), {
    mode: 0o600,
  });
  return true;
}

describe('tokens that expire every second', () => {
  it('are refreshed during the sync; the file on disk ends with a working pair, mode 0600', async () => {
    const { sim, dir } = await site({ scale: 'tiny', seed: 3, tokenTtlSeconds: 1, latency: { ms: 15 } });
    const credentials = await writeCredentials(sim, join(dir, 'creds.json'));
    const before = await readFile(credentials, 'utf8');
    const result = await syncOnce(sim, { credentials, warehouse: join(dir, 'w.duckdb'), concurrency: 4 });
    expect(result.status).toBe('succeeded');
    expect(result.client.refreshes).toBeGreaterThan(0);
    expect(await readFile(credentials, 'utf8')).not.toBe(before);
    expect((await stat(credentials)).mode & 0o777).toBe(0o600);
    expect(await refreshWorks(sim, credentials)).toBe(true);
  });

  it('a sync killed right after a refresh starts again and works', async () => {
    const { sim, dir } = await site({ scale: 'tiny', seed: 4, tokenTtlSeconds: 1, latency: { ms: 20 }, rate: 0 });
    const credentials = await writeCredentials(sim, join(dir, 'creds.json'));
    const original = await readFile(credentials, 'utf8');
    const args = syncCliArgs(sim.url, dir, {
      credentials,
      warehouse: ['--warehouse', join(dir, 'w.duckdb')],
      rate: 200,
    });
    let killedAfterRefresh = false;
    const first = await runCli(args, {
      onSpawn: (child) => {
        const poll = setInterval(() => {
          void readFile(credentials, 'utf8').then((now) => {
            if (now !== original && !killedAfterRefresh) {
              killedAfterRefresh = true;
              child.kill('SIGKILL');
              clearInterval(poll);
            }
          });
        }, 5);
        child.on('close', () => clearInterval(poll));
      },
    });
    expect(killedAfterRefresh).toBe(true);
    expect(first.signal).toBe('SIGKILL');
    const second = await runCliInProcess(args);
    expect(second.stderr).not.toMatch(/regenerate|invalid_grant/);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/SUCCEEDED/);
    expect((await stat(credentials)).mode & 0o777).toBe(0o600);
    expect(await refreshWorks(sim, credentials)).toBe(true);
  });
});

describe('5 % injected faults', () => {
  it('a sync completes and equals a fault-free sync', async () => {
    const clean = await site({ scale: 'tiny', seed: 21 });
    const expected = await referenceDump(clean.sim, clean.dir);

    const faulty = await site({ scale: 'tiny', seed: 21, faults: { rate: 0.05, seed: 9, latencyMs: 50 } });
    const faultyCreds = await writeCredentials(faulty.sim, join(faulty.dir, 'creds.json'));
    const result = await syncOnce(faulty.sim, { credentials: faultyCreds, warehouse: join(faulty.dir, 'w.duckdb') });
    expect(result.status).toBe('succeeded');
    const injected = faulty.sim.control.faultsInjected();
    expect(Object.values(injected).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
    expect(result.client.retries).toBeGreaterThan(0);

    const actual = await dumpWarehouse(join(faulty.dir, 'w.duckdb'));
    expect(summarize(actual)).toEqual(summarize(expected));
  });
});
