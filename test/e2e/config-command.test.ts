/** `grantflow config`: every effective setting, where it came from, secrets masked. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await dir.remove();
});

/** The printed table as setting → [value, from]. */
function table(stdout: string): Map<string, [string, string]> {
  const rows = stdout.trim().split('\n').slice(1);
  return new Map(
    rows.map((row) => {
      const [key, value, from] = row.split(/ {2,}/);
      return [key ?? '', [value ?? '', from ?? '']];
    }),
  );
}

describe('grantflow config', () => {
  it('names the source of each setting (flag, variable, pipeline file, default) and masks secrets', async () => {
    const pipeline = join(dir.path, 'pipeline.json');
    await writeFile(pipeline, JSON.stringify({ concurrency: 3, siteTimeZone: 'Europe/Berlin' }));
    const password = 'pw-that-must-not-show';
    const clientSecret = 'client-secret-that-must-not-show';
    const r = await runCliInProcess(
      ['config', '--pipeline', pipeline, '--rate', '7', '--warehouse', `postgres://grants:${password}@db.example/dw`],
      { env: { GRANTFLOW_PER_PAGE: '50', GRANTFLOW_CLIENT_SECRET: clientSecret, GRANTFLOW_RATE: '3' } },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).not.toContain(password);
    expect(r.stdout).not.toContain(clientSecret);
    const t = table(r.stdout);
    // A flag wins over the variable GRANTFLOW_RATE.
    expect(t.get('rate')).toEqual(['7', 'flag --rate']);
    expect(t.get('perPage')).toEqual(['50', 'variable GRANTFLOW_PER_PAGE']);
    expect(t.get('concurrency')).toEqual(['3', `pipeline file ${pipeline}`]);
    expect(t.get('siteTimeZone')).toEqual(['Europe/Berlin', `pipeline file ${pipeline}`]);
    expect(t.get('schema')).toEqual(['public', 'default']);
    expect(t.get('warehouse')).toEqual(['postgres://grants:********@db.example/dw', 'flag --warehouse']);
    expect(t.get('GRANTFLOW_CLIENT_SECRET')).toEqual(['********', 'variable GRANTFLOW_CLIENT_SECRET']);
    // Every setting is listed, not only those given.
    expect(t.has('fullRefreshAfterDays')).toBe(true);
    expect(t.has('site')).toBe(true);
  });

  it('refuses a bad value as sync does: one line, exit 2', async () => {
    const r = await runCliInProcess(['config'], { env: { GRANTFLOW_RATE: 'fast' } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      'grantflow: environment variable GRANTFLOW_RATE must be a number, got "fast"',
    ]);
  });
});
