/**
 * Figure 4: normalise + load throughput and peak RSS of a replay of landed raw pages, into DuckDB and Postgres,
 * each in a child process of its own; next to DuckDB's own read_json ingest of the same records (the ceiling).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { compiledIsFresh } from '../../bin/cli-entry.js';
import { landRaw, type LandedRaw } from '../lib/land-raw.ts';
import { packageRoot } from '../../src/util/package-root.ts';
import { fmt, type BenchOptions, type Check, type FigureResult } from '../lib/figure.ts';

const run = promisify(execFile);
const landingConcurrency = 64;

interface ChildResult {
  records: number;
  rows?: number;
  pages?: number;
  ms: number;
  /** CPU time of the child's timed part, over all its threads. */
  cpuMs?: number;
  maxRssMb: number;
}

async function child(script: string, args: readonly string[]): Promise<ChildResult> {
  const { stdout } = await run(process.execPath, [join(packageRoot, 'bench/lib', script), ...args], {
    cwd: packageRoot,
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as ChildResult;
}

interface ScaleRun {
  readonly land: LandedRaw;
  readonly duckdb: ChildResult;
  readonly postgres: ChildResult;
  readonly ceiling: ChildResult;
  readonly normalise: ChildResult;
}

async function measureScale(scale: string, options: BenchOptions): Promise<ScaleRun> {
  const land = await landRaw(scale, options.seed, landingConcurrency);
  const dir = await mkdtemp(join(tmpdir(), `gf-bench-load-${scale}-`));
  try {
    const duckdb = await child('replay-child.js', [join(dir, 'w.duckdb'), 'public', land.rawDir, land.runId]);
    const schema = `bench_${randomBytes(4).toString('hex')}`;
    let postgres: ChildResult;
    try {
      postgres = await child('replay-child.js', [options.postgresUrl, schema, land.rawDir, land.runId]);
    } finally {
      const client = new pg.Client({ connectionString: options.postgresUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
    const ceiling = await child('read-json-child.js', [land.rawDir, land.runId, join(dir, 'ndjson')]);
    const normalise = await child('normalise-child.js', [land.rawDir, land.runId]);
    return { land, duckdb, postgres, ceiling, normalise };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const perS = (r: ChildResult): number => r.records / (r.ms / 1000);
const cpuS = (r: ChildResult): string => (r.cpuMs === undefined ? '—' : `${(r.cpuMs / 1000).toFixed(1)} s`);

/**
 * A sync is bound by the site: 5 requests per second, at most 100 records a page for top-level lists (a few per
 * request for the per-application endpoints), so the API delivers at most 500 records/s. Local work (parse,
 * normalise, load) only has to stay far from that bound, on this machine's 2 cores, with either engine.
 */
const apiRecordsPerS = 5 * 100;
const throughputGoal = 20 * apiRecordsPerS;
/** Peak RSS of a replay of the large scale, in MB as the children report it (maxRSS / 1024). */
const largePeakRssGoalMb = 1024;

/** Figure 4's checks from its measurements, one scale after another (smallest first). */
export function loadChecks(runs: readonly (readonly [string, Omit<ScaleRun, 'land'>])[]): Check[] {
  const checks: Check[] = [];
  const rateGoal = `≥ ${fmt(throughputGoal)} (20 × the API's ${fmt(apiRecordsPerS)})`;
  for (const [scale, r] of runs) {
    const duck = perS(r.duckdb);
    const pgRate = perS(r.postgres);
    const ceil = perS(r.ceiling);
    const peakMb = Math.max(r.duckdb.maxRssMb, r.postgres.maxRssMb);
    checks.push(
      { figure: `${scale}: DuckDB records/s`, value: fmt(duck), goal: rateGoal, met: duck >= throughputGoal },
      { figure: `${scale}: Postgres records/s`, value: fmt(pgRate), goal: rateGoal, met: pgRate >= throughputGoal },
      {
        figure: `${scale}: DuckDB / Postgres vs read_json ceiling`,
        value:
          `${(ceil / duck).toFixed(1)} × / ${(ceil / pgRate).toFixed(1)} × slower ` +
          `(read_json ${fmt(ceil)} records/s)`,
        goal: '—',
        met: null,
      },
      {
        figure: `${scale}: peak RSS DuckDB / Postgres replay`,
        value: `${fmt(r.duckdb.maxRssMb)} MB / ${fmt(r.postgres.maxRssMb)} MB`,
        // The goal is set for the large scale; a smaller one is reported beside it.
        goal: scale === 'large' ? `≤ 1 GB (${fmt(largePeakRssGoalMb)} MB)` : '—',
        met: scale === 'large' ? peakMb <= largePeakRssGoalMb : null,
      },
      {
        figure: `${scale}: parse + normalise alone (no warehouse, one thread)`,
        value: `${fmt(perS(r.normalise))} records/s, ${cpuS(r.normalise)} CPU`,
        goal: '—',
        met: null,
      },
    );
  }
  if (runs.length >= 2) {
    const [a, b] = [runs[0]!, runs[runs.length - 1]!];
    const peak = (r: Omit<ScaleRun, 'land'>): number => Math.max(r.duckdb.maxRssMb, r.postgres.maxRssMb);
    checks.push({
      figure: `peak RSS ${b[0]} / ${a[0]}`,
      value: `${(peak(b[1]) / peak(a[1])).toFixed(2)} ×`,
      goal: '—',
      met: null,
    });
  }
  return checks;
}

export async function loadFigure(options: BenchOptions): Promise<FigureResult> {
  // The children run the compiled build, as the CLI does: measuring an old one would report someone else's code.
  if (!compiledIsFresh(packageRoot))
    throw new Error(
      'figure 4 measures the compiled build, and dist/ is missing or older than src/: run `npm run build`',
    );
  const started = performance.now();
  const runs: [string, ScaleRun][] = [];
  for (const scale of options.loadScales) runs.push([scale, await measureScale(scale, options)]);
  const checks = loadChecks(runs);
  const line = (scale: string, path: string, r: ChildResult): string =>
    `| ${scale} | ${path} | ${fmt(r.records)} | ${r.rows === undefined ? '—' : fmt(r.rows)} | ` +
    `${r.pages === undefined ? '—' : fmt(r.pages)} | ${(r.ms / 1000).toFixed(1)} s | ${cpuS(r)} | ${fmt(perS(r))} | ` +
    `${fmt(r.maxRssMb)} MB |`;
  const rows = runs
    .map(([scale, r]) =>
      [
        line(scale, 'grantflow replay → DuckDB', r.duckdb),
        line(scale, 'grantflow replay → Postgres', r.postgres),
        line(scale, 'DuckDB `read_json` (ceiling)', r.ceiling),
        line(scale, 'parse + normalise alone (floor of the JS path)', r.normalise),
      ].join('\n'),
    )
    .join('\n');
  const landing = runs
    .map(
      ([scale, r]) =>
        `${scale}: ${fmt(r.land.requests)} requests in ${(r.land.landingMs / 1000).toFixed(0)} s = ` +
        `${fmt(r.land.requests / (r.land.landingMs / 1000))} req/s (concurrency ${r.land.concurrency})` +
        (r.land.cached ? ' — landed by an earlier run, read from the cache' : ' — landed in this run'),
    )
    .join('; ');
  return {
    name: 'load',
    title: '4. Normalise + load throughput and peak RSS (replay of landed raw pages)',
    scale: options.loadScales.join(', '),
    durationMs: performance.now() - started,
    checks,
    details: [
      `Raw pages are landed once by a real grantflow sync (\`landRaw: true\`) against \`grantflow sim\` running in its ` +
        `own process with the rate limit off (grantflow \`rate: 1000\`, \`concurrency: ${landingConcurrency}\`), and cached ` +
        `under \`data/bench/raw/<scale>-<seed>/\`. Landing: ${landing}. Each replay (\`runReplay\`: parse pages, ` +
        `normalise, stage, merge, commit; \`bench/lib/replay-child.js\`) runs in a fresh child process, so \`maxRSS\` is its ` +
        `own; timing covers the replay call and closing the warehouse (migrations and DuckDB's final checkpoint included, ` +
        `process start excluded). DuckDB runs with grantflow's defaults (memory limit 256MB; replay normalises in a ` +
        `worker thread). Postgres: a fresh schema at ` +
        `\`GRANTFLOW_TEST_POSTGRES_URL\`, dropped afterwards. The ceiling writes each stream's records as NDJSON ` +
        `(untimed), then times \`CREATE TABLE … AS SELECT * FROM read_json(…)\` for every stream plus a CHECKPOINT. ` +
        `"records" are API records; "rows" are the warehouse rows they normalise into (child tables included). ` +
        `"parse + normalise alone" runs what a replay runs before the warehouse (read, gunzip, parse, normalise; ` +
        `\`replayEvents\`, \`bench/lib/normalise-child.js\`) for every stream on one thread and discards the rows: ` +
        `every replay needs at least its CPU time. CPU is the child's over all its threads (for Postgres, not the ` +
        `server's).`,
      `| scale | path | records | rows | pages | time | CPU | records/s | peak RSS |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n${rows}`,
    ],
  };
}
