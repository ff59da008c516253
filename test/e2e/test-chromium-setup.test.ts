/**
 * How the suite gets the report tests' chromium on a fresh machine (test/support/chromium.ts): each case is tried with
 * a PATH of its own, a folder holding only what the case needs, so that nothing is uninstalled from this machine. The
 * apt-get there is a script that records how it was called and, on `install`, puts a `chromium` beside itself.
 */
import { accessSync, constants } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chooseChromium, findChromium, installDebianChromium, suiteChromium } from '../support/chromium.ts';
import { tempDir } from '../support/temp-dir.ts';

let bin: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  bin = await tempDir('grantflow-test-chromium-');
});
afterEach(() => bin.remove());

async function executable(name: string, script = '#!/bin/sh\n'): Promise<string> {
  const path = join(bin.path, name);
  await writeFile(path, script);
  await chmod(path, 0o755);
  return path;
}

/** An apt-get that logs its arguments; `install` adds a chromium unless `installs` is false. */
function fakeAptGet(installs = true): Promise<string> {
  const add = installs ? `printf '#!/bin/sh\\n' > "$here/chromium"; /bin/chmod +x "$here/chromium"` : 'exit 100';
  return executable(
    'apt-get',
    `#!/bin/sh\nhere=\${0%/*}\necho "$DEBIAN_FRONTEND $*" >> "$here/calls"\ncase "$*" in *install*) ${add};; esac\n`,
  );
}

const aptCalls = async (): Promise<string[]> =>
  (await readFile(join(bin.path, 'calls'), 'utf8').catch(() => '')).split('\n').filter(Boolean);

const env = (): NodeJS.ProcessEnv => ({ PATH: bin.path });
const noPackage = async (): Promise<undefined> => undefined;
const neverInstall = (): Promise<void> => {
  throw new Error('no install was expected');
};

describe('the chromium of the browser tests', () => {
  it('is the one on PATH when there is one, as root with apt-get too', async () => {
    const path = await executable('chromium');
    await fakeAptGet();
    const probe = { env: env(), isRoot: true, packaged: async () => '/elsewhere/chrome' };
    expect(await findChromium(probe, neverInstall)).toEqual({ path, from: 'PATH' });
    expect(await aptCalls()).toEqual([]);
  });

  it('takes no file on PATH that cannot be run', async () => {
    await writeFile(join(bin.path, 'chromium'), '#!/bin/sh\n');
    const choice = await chooseChromium({ env: env(), isRoot: false, packaged: noPackage });
    expect(choice.kind).toBe('missing');
  });

  it("is Debian's package, installed with apt-get, when missing as root where apt-get is", async () => {
    await fakeAptGet();
    const probe = { env: env(), isRoot: true, packaged: async () => '/elsewhere/chrome' };
    expect(await chooseChromium(probe)).toEqual({ kind: 'install' });
    expect(await findChromium(probe)).toEqual({ path: join(bin.path, 'chromium'), from: 'PATH' });
    expect(await aptCalls()).toEqual([
      'noninteractive -q update',
      'noninteractive -q install -y --no-install-recommends chromium',
    ]);
  });

  it('falls back to a packaged browser, or one line, when the install gives none, and tries it once', async () => {
    await fakeAptGet(false);
    const packaged = await findChromium({ env: env(), isRoot: true, packaged: async () => '/pkg/chrome' });
    expect(packaged).toEqual({ path: '/pkg/chrome', from: 'playwright-core' });
    expect(await aptCalls()).toHaveLength(2);
    const none = await findChromium({ env: env(), isRoot: true, packaged: noPackage });
    expect(none).toEqual({ missing: expect.stringMatching(/^installing Debian's chromium gave none.*apt-get update/) });
    expect(await aptCalls()).toHaveLength(4);
  });

  it('is not installed when apt-get update fails', async () => {
    await executable('apt-get', `#!/bin/sh\necho "$*" >> "\${0%/*}/calls"\nexit 100\n`);
    await installDebianChromium(env());
    expect(await aptCalls()).toEqual(['-q update']);
  });

  it('is a packaged browser, never an install, when not root', async () => {
    await fakeAptGet();
    const probe = { env: env(), isRoot: false, packaged: async () => '/pkg/chrome' };
    expect(await findChromium(probe, neverInstall)).toEqual({ path: '/pkg/chrome', from: 'playwright-core' });
    const missing = await findChromium({ ...probe, packaged: noPackage }, neverInstall);
    expect(missing).toEqual({
      missing: expect.stringContaining(
        'run `sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium`',
      ),
    });
  });

  it('is one line saying what to do when there is nothing at all', async () => {
    const found = await findChromium({ env: env(), isRoot: true, packaged: noPackage }, neverInstall);
    expect(found).toEqual({ missing: expect.stringContaining('install chromium so that `chromium` is on PATH') });
    expect('missing' in found && found.missing).not.toContain('\n');
  });

  it('is handed to the test files by the global setup, and can be run', () => {
    expect(() => accessSync(suiteChromium(), constants.X_OK)).not.toThrow();
  });
});
