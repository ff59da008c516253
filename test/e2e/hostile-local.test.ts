/**
 * Issue 44: what the local machine can leave open around a sync (a credentials file others may read, an object
 * store over plain http, certificate checks switched off, a password on the command line) is refused or warned of.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { startSite, syncCliArgs, tempDir, writeCredentials } from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo();
});

/** The smallest sync: one stream, no models, no landed pages. */
const small = ['--models', 'false', '--land-raw', 'false', '--streams', 'programs'];

describe('local hardening', () => {
  it('sync warns once about a credentials file others may read, and the run goes on', async () => {
    const sim = await startSite();
    const dir = await tempDir();
    cleanup.push(
      () => sim.close(),
      () => dir.remove(),
    );
    const credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
    await chmod(credentials, 0o644);
    const result = await runCliInProcess([...syncCliArgs(sim.url, dir.path), ...small]);
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n').filter((l) => l.includes('other users may read'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(credentials);
    expect(lines[0]).toMatch(/warn|"level":40/i);
  });
});
