/**
 * Raw pages of a whole site, landed once by a real sync (simulator in its own process, rate limit off) and cached
 * under data/bench/raw/<scale>-<seed>/ between benchmark runs; meta.json records how long the landing took.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSimProcess } from './sim-process.ts';
import { packageRoot } from '../../src/util/package-root.ts';
import { benchSync } from './sync.ts';

export interface LandedRaw {
  readonly rawDir: string;
  readonly runId: string;
  readonly scale: string;
  readonly requests: number;
  readonly landingMs: number;
  readonly concurrency: number;
  readonly cached: boolean;
}

export const benchDataDir = join(packageRoot, 'data/bench');

export async function landRaw(scale: string, seed: number, concurrency: number): Promise<LandedRaw> {
  const base = join(benchDataDir, 'raw', `${scale}-${seed}`);
  const metaPath = join(base, 'meta.json');
  try {
    const meta = JSON.parse(await readFile(metaPath, 'utf8')) as Omit<LandedRaw, 'cached'>;
    return { ...meta, cached: true };
  } catch {
    // not landed yet
  }
  await rm(base, { recursive: true, force: true });
  const work = join(base, 'work');
  await mkdir(work, { recursive: true });
  const creds = join(work, 'credentials.json');
  const sim = await startSimProcess({ scale, seed, rate: 0, credentialsOut: creds });
  try {
    const started = performance.now();
    const result = await benchSync(sim, work, creds, {
      landRaw: true,
      rawDir: join(base, 'pages'),
      rate: 1000,
      concurrency,
    });
    const landingMs = performance.now() - started;
    const counts = await sim.counts();
    const meta = {
      rawDir: join(base, 'pages'),
      runId: result.runId,
      scale,
      requests: counts.total,
      landingMs,
      concurrency,
    };
    await writeFile(metaPath, JSON.stringify(meta, null, 2));
    return { ...meta, cached: false };
  } finally {
    await sim.close();
    await rm(work, { recursive: true, force: true });
  }
}
