/**
 * Figure 9: what declaring primary keys costs a DuckDB load (docs/architecture.md#keys-and-descriptions). The same
 * landed run is replayed into fresh DuckDB files whose tables declare their primary keys or do not, in turns, each
 * twice into its file: a first load, then a merge of every row again over the stored ones.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compiledIsFresh } from '../../bin/cli-entry.js';
import { landRaw } from '../lib/land-raw.ts';
import { packageRoot } from '../../src/util/package-root.ts';
import { fmt, type BenchOptions, type FigureResult } from '../lib/figure.ts';

const run = promisify(execFile);
/** A load may cost at most this much more with keys for them to be declared (issue 41). */
const allowed = 1.2;
const rounds = 3;

interface KeysRun {
  records: number;
  firstMs: number;
  againMs: number;
  firstCpuMs: number;
  againCpuMs: number;
  maxRssMb: number;
  keys: number;
}

async function replay(file: string, rawDir: string, runId: string, mode: 'keys' | 'none'): Promise<KeysRun> {
  const script = join(packageRoot, 'bench/lib/replay-keys-child.js');
  const { stdout } = await run(process.execPath, [script, file, rawDir, runId, mode], { cwd: packageRoot });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '') as KeysRun;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export async function keysFigure(options: BenchOptions): Promise<FigureResult> {
  if (!compiledIsFresh(packageRoot))
    throw new Error(
      'figure 9 measures the compiled build, and dist/ is missing or older than src/: run `npm run build`',
    );
  const started = performance.now();
  const scale = options.loadScales[0] ?? 'medium';
  const land = await landRaw(scale, options.seed, 64);
  const dir = await mkdtemp(join(tmpdir(), 'gf-bench-keys-'));
  const runs: Record<'keys' | 'none', KeysRun[]> = { keys: [], none: [] };
  try {
    for (let i = 0; i < rounds; i++) {
      // In turns, so a neighbour's load on the shared cores weighs on both alike.
      for (const mode of ['none', 'keys'] as const) {
        const file = join(dir, `${mode}-${i}.duckdb`);
        runs[mode].push(await replay(file, land.rawDir, land.runId, mode));
        await rm(file, { force: true });
        await rm(`${file}.wal`, { force: true });
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // CPU time over the child's threads: on shared cores, wall time swung 3 × between tries of the same load.
  const first = (m: 'keys' | 'none'): number => median(runs[m].map((r) => r.firstCpuMs));
  const again = (m: 'keys' | 'none'): number => median(runs[m].map((r) => r.againCpuMs));
  const records = runs.none[0]?.records ?? 0;
  const firstRatio = first('keys') / first('none');
  const againRatio = again('keys') / again('none');
  const goal = `≤ ${allowed.toFixed(2)} × to declare them`;
  const s = (ms: number): string => (ms / 1000).toFixed(1);
  const rows = (['none', 'keys'] as const)
    .map(
      (m) =>
        `| ${m === 'keys' ? `declared (${runs.keys[0]?.keys ?? 0} tables)` : 'none (as shipped)'} | ` +
        `${runs[m].map((r) => s(r.firstCpuMs)).join(' / ')} s | ${runs[m].map((r) => s(r.firstMs)).join(' / ')} s | ` +
        `${runs[m].map((r) => s(r.againCpuMs)).join(' / ')} s | ${runs[m].map((r) => s(r.againMs)).join(' / ')} s | ` +
        `${fmt(Math.max(...runs[m].map((r) => r.maxRssMb)))} MB |`,
    )
    .join('\n');
  return {
    name: 'keys',
    title: '9. What primary keys cost a DuckDB load',
    scale,
    durationMs: performance.now() - started,
    checks: [
      {
        figure: `${scale}: DuckDB first load, CPU with keys / without`,
        value: `${s(first('keys'))} s / ${s(first('none'))} s = ${firstRatio.toFixed(2)} ×`,
        goal,
        met: firstRatio <= allowed,
      },
      {
        figure: `${scale}: DuckDB merge of every row again, CPU with keys / without`,
        value: `${s(again('keys'))} s / ${s(again('none'))} s = ${againRatio.toFixed(2)} ×`,
        goal,
        met: againRatio <= allowed,
      },
    ],
    details: [
      `The run landed for figure 4 (${scale}, ${fmt(records)} records) replayed (\`runReplay\`, ` +
        `\`bench/lib/replay-keys-child.js\`) into a fresh DuckDB file per try, ${rounds} tries per mode in turns; each ` +
        `try replays twice into its file: a first load, then every row merged again over the stored ones (every key ` +
        `present: the UPDATE path of the merge). "declared": after the migration, \`ALTER TABLE … ADD PRIMARY KEY\` on ` +
        `every table that has a key, while they are empty. Times include closing the warehouse (its checkpoint). ` +
        `Medians of CPU time (the child's, over all its threads) compared: on the 2 shared cores, wall time swung ` +
        `3 × between tries of the same load. "met" means the keys cost little enough to declare them; a missed goal is why DuckDB's ` +
        `tables declare none (docs/architecture.md#keys-and-descriptions). Postgres declares them always: its merge ` +
        `(\`INSERT … ON CONFLICT\`) needs them.`,
      `| keys | first load CPU (tries) | wall | merge again CPU (tries) | wall | peak RSS |\n| --- | ---: | ---: | ---: | ---: | ---: |\n${rows}`,
    ],
  };
}
