/**
 * The simulator in its own process (`grantflow sim`), so the site and the client do not share one core's event
 * loop: used where the client's own speed is what is measured (landing medium/large raw pages).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Credentials } from '../../src/credentials/types.ts';
import type { RequestCounts } from '../../src/simulator/index.ts';
import { cliPath, packageRoot } from '../../src/util/package-root.ts';

export interface SimProcess {
  readonly url: string;
  readonly credentials: Credentials;
  counts(): Promise<RequestCounts>;
  resetCounts(): Promise<void>;
  close(): Promise<void>;
}

export async function startSimProcess(options: {
  scale: string;
  seed: number;
  rate: number;
  credentialsOut: string;
}): Promise<SimProcess> {
  const args = [
    cliPath,
    'sim',
    '--scale',
    options.scale,
    '--seed',
    String(options.seed),
    '--rate',
    String(options.rate),
    '--credentials-out',
    options.credentialsOut,
  ];
  const child = spawn(process.execPath, args, { cwd: packageRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`grantflow sim exited with ${code} before listening`)));
  });
  const credentials = JSON.parse(await readFile(options.credentialsOut, 'utf8')) as Credentials;
  return {
    url,
    credentials,
    counts: async () => (await (await fetch(`${url}/_sim/counts`)).json()) as RequestCounts,
    resetCounts: async () => {
      await fetch(`${url}/_sim/counts/reset`, { method: 'POST' });
    },
    close: () => stop(child),
  };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
