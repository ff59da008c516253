/**
 * `npm run bench [-- --only rate,requests,load,snapshot,naive,report,portfolio,keys] [--scale small] [--load-scales medium,large]
 * [--seed 42]`: runs the benchmarks one after another (never in parallel: they would skew each other), stores
 * each figure's result under bench/results/ (committed, so a partial run on a fresh clone keeps the other figures) and
 * rewrites BENCHMARKS.md from the latest result of each.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isScaleName } from '../src/simulator/index.ts';
import { machine } from './lib/machine.ts';
import { renderReport } from './lib/report.ts';
import { packageRoot } from '../src/util/package-root.ts';
import type { BenchOptions, FigureResult } from './lib/figure.ts';
import { rateFigure } from './figures/rate.ts';
import { requestFigures } from './figures/requests.ts';
import { loadFigure } from './figures/load.ts';
import { keysFigure } from './figures/keys.ts';
import { snapshotFigure } from './figures/snapshot.ts';
import { naiveFigure } from './figures/naive.ts';
import { reportFigure } from './figures/report.ts';
import { portfolioFigure } from './figures/portfolio.ts';

const names = ['rate', 'requests', 'load', 'snapshot', 'naive', 'report', 'portfolio', 'keys'] as const;
/** Stored result files, in report order (`requests` produces two). */
const order = ['rate', 'requests', 'incremental', 'load', 'snapshot', 'naive', 'report', 'portfolio', 'keys'];

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    scale: { type: 'string', default: 'small' },
    'load-scales': { type: 'string', default: 'medium,large' },
    seed: { type: 'string', default: '42' },
  },
});

const only = (values.only ?? []).flatMap((v) => v.split(',')).filter(Boolean);
const unknown = only.filter((n) => !(names as readonly string[]).includes(n));
const loadScales = values['load-scales'].split(',').filter(Boolean);
for (const s of [values.scale, ...loadScales]) if (!isScaleName(s)) fail(`unknown scale "${s}"`);
if (unknown.length > 0) fail(`unknown benchmark ${unknown.join(', ')}; known: ${names.join(', ')}`);
const seed = Number(values.seed);
if (!Number.isInteger(seed)) fail(`--seed must be an integer, got "${values.seed}"`);
const selected = only.length > 0 ? names.filter((n) => only.includes(n)) : [...names];

const options: BenchOptions = {
  scale: values.scale,
  loadScales,
  seed,
  postgresUrl: process.env.GRANTFLOW_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
};
const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
const resultsDir = join(packageRoot, 'bench/results');
await mkdir(resultsDir, { recursive: true });
const startedAt = new Date().toISOString();
const started = performance.now();

async function store(result: FigureResult): Promise<void> {
  result.measuredAt = new Date().toISOString();
  result.command = command;
  await writeFile(join(resultsDir, `${result.name}.json`), JSON.stringify(result, null, 2));
  for (const c of result.checks)
    process.stderr.write(
      `  ${c.figure}: ${c.value} (goal ${c.goal}${c.met === null ? '' : c.met ? ', met' : ', MISSED'})\n`,
    );
}

async function stored(name: string): Promise<FigureResult | null> {
  try {
    return JSON.parse(await readFile(join(resultsDir, `${name}.json`), 'utf8')) as FigureResult;
  } catch {
    return null;
  }
}

for (const name of selected) {
  process.stderr.write(`bench ${name}...\n`);
  const t0 = performance.now();
  switch (name) {
    case 'rate':
      await store(await rateFigure(options));
      break;
    case 'requests': {
      const r = await requestFigures(options);
      await store(r.full);
      await store(r.incremental);
      break;
    }
    case 'load':
      await store(await loadFigure(options));
      break;
    case 'snapshot':
      await store(await snapshotFigure(options));
      break;
    case 'report':
      await store(await reportFigure(options));
      break;
    case 'portfolio':
      await store(await portfolioFigure(options));
      break;
    case 'keys':
      await store(await keysFigure(options));
      break;
    case 'naive': {
      // Compare against figures 1-3 as last measured; measure the request counts now if there are none.
      const rate = (await stored('rate'))?.numbers?.rate ?? 5 * 0.97;
      let inc = await stored('incremental');
      if (!inc?.numbers) {
        const r = await requestFigures({ ...options, scale: 'small' });
        await store(r.full);
        await store(r.incremental);
        inc = r.incremental;
      }
      const n = inc.numbers ?? {};
      await store(
        await naiveFigure(options, {
          rate,
          full: n.full ?? NaN,
          noChange: n.noChange ?? NaN,
          change: n.change ?? NaN,
          scale: inc.scale.split(' ')[0] ?? '?',
        }),
      );
      break;
    }
  }
  process.stderr.write(`bench ${name}: ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
}

const results = (await Promise.all(order.map(stored))).filter((r): r is FigureResult => r !== null);
let notes = '';
try {
  notes = await readFile(join(packageRoot, 'bench/analysis.md'), 'utf8');
} catch {
  // no hand-written analysis yet
}
const report = renderReport(
  results,
  { command, startedAt, durationMs: performance.now() - started, machine: machine(), figures: selected },
  notes,
);
await writeFile(join(packageRoot, 'BENCHMARKS.md'), report);
process.stderr.write(`BENCHMARKS.md written (${((performance.now() - started) / 60_000).toFixed(1)} min)\n`);

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}
