/**
 * The chromium the report's browser tests drive (through playwright-core), found with no manual step so that `npm test`
 * passes on a fresh machine: `chromium` on PATH; else, as root where apt-get is, Debian's `chromium` package installed
 * by the global setup; else a chromium that playwright-core already has (an npm package can ship one). No browser is
 * ever downloaded other than Debian's package. Failing all three, one line says what to run, and the browser tests fail
 * with it rather than being skipped.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { inject } from 'vitest';

/** What the choice depends on, passed in so that a test can try each case on a machine that has chromium. */
export interface ChromiumProbe {
  readonly env: NodeJS.ProcessEnv;
  readonly isRoot: boolean;
  /** A chromium that an npm package holds (playwright-core's browsers folder), when one is there. */
  readonly packaged: () => Promise<string | undefined>;
}

export type ChromiumChoice =
  | { readonly kind: 'found'; readonly path: string; readonly from: 'PATH' | 'playwright-core' }
  | { readonly kind: 'install' }
  | { readonly kind: 'missing'; readonly message: string };

export type ChromiumFound = { readonly path: string; readonly from: string } | { readonly missing: string };

const names = ['chromium', 'chromium-browser'];
const aptInstall = ['install', '-y', '--no-install-recommends', 'chromium'];

/** The first executable `name` in the PATH of `env`. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** What to do; with `installTried`, never an install again. */
export async function chooseChromium(probe: ChromiumProbe, installTried = false): Promise<ChromiumChoice> {
  for (const name of names) {
    const path = onPath(name, probe.env);
    if (path) return { kind: 'found', path, from: 'PATH' };
  }
  const apt = onPath('apt-get', probe.env) !== undefined;
  if (apt && probe.isRoot && !installTried) return { kind: 'install' };
  const packaged = await probe.packaged();
  if (packaged) return { kind: 'found', path: packaged, from: 'playwright-core' };
  const sudo = probe.isRoot ? '' : 'sudo ';
  const what = apt
    ? `run \`${sudo}apt-get update && ${sudo}apt-get ${aptInstall.join(' ')}\``
    : 'install chromium so that `chromium` is on PATH';
  const why = installTried ? "installing Debian's chromium gave none" : 'no chromium on PATH';
  return { kind: 'missing', message: `${why}, so the report's browser tests will fail: ${what}, then run them again` };
}

/** The chromium playwright-core has (its browsers folder, `PLAYWRIGHT_BROWSERS_PATH`), when it is there. */
export async function playwrightChromium(): Promise<string | undefined> {
  const { chromium } = await import('playwright-core');
  const path = chromium.executablePath();
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}

/** Runs apt-get with its output on the terminal (a failure shows there); true when it succeeded. */
function aptGet(args: string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  console.log(`chromium: apt-get ${args.join(' ')}`);
  const child = spawn('apt-get', ['-q', ...args], {
    env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return new Promise((resolve) => {
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}

/** Debian's package, installed the way .ci/run's machines and the README's fresh machine both get it. */
export async function installDebianChromium(env: NodeJS.ProcessEnv): Promise<void> {
  console.log("chromium: not found; installing Debian's chromium package for the report's browser tests");
  if (await aptGet(['update'], env)) await aptGet(aptInstall, env);
}

/** For the global setup: the chromium to use, installing Debian's when the machine allows it. */
export async function findChromium(
  probe: ChromiumProbe,
  install: (env: NodeJS.ProcessEnv) => Promise<void> = installDebianChromium,
): Promise<ChromiumFound> {
  let choice = await chooseChromium(probe);
  if (choice.kind === 'install') {
    await install(probe.env);
    choice = await chooseChromium(probe, true);
  }
  if (choice.kind === 'found') return { path: choice.path, from: choice.from };
  if (choice.kind === 'missing') return { missing: choice.message };
  throw new Error('chromium: an install was chosen after one was tried');
}

/** For a test file: the chromium the global setup found, or the setup's line saying what to run. */
export function suiteChromium(): string {
  const path = inject('chromiumPath');
  if (path) return path;
  throw new Error(inject('chromiumMissing') ?? 'no chromium: run the tests with the suite global setup (npm test)');
}
