import type { Command } from 'commander';

import { mkdir, rm, writeFile } from 'node:fs/promises';

import { existsSync } from 'node:fs';

import { join, resolve } from 'node:path';

import { settingsSchema } from '../../config/settings.ts';

import { loadSettings } from '../../config/load-settings.ts';

import { runSync } from '../../pipeline/sync.ts';
import { reportAfterSync } from '../../report/after-sync.ts';

import { formatSummary } from '../../pipeline/summary.ts';

import { startSimulator } from '../../simulator/index.ts';

import { openWarehouse } from '../../warehouse/index.ts';

import { ConfigError, LockedError } from '../../util/errors.ts';

import { createLogger } from '../../util/logger.ts';

import { runAction } from '../run-action.ts';

import { seedFlag } from './sim.ts';

import { checkWritableDir } from '../../util/writable-dir.ts';
import { tables } from '../../streams/registry.ts';
import { packagePath } from '../../util/package-root.ts';

const scales = ['tiny', 'small', 'medium', 'large'] as const;
/** Shipped with the package, so `grantflow demo` finds it from any working directory. */
const defaultPipeline = packagePath('pipelines', 'demo.json');
type Scale = (typeof scales)[number];

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .summary('the whole pipeline against the built-in simulated site')
    .description(
      'Start the built-in simulated site with fresh credentials, sync it into <dir>/warehouse.duckdb, run the ' +
        'models and data tests, write Parquet snapshots to <dir>/snapshots and the HTML report to <dir>/report, and ' +
        'print a summary. The simulated site allows --rate requests per second (a real one allows 5) so the demo is ' +
        'quick.',
    )
    .option(
      '--scale <scale>',
      `data size: ${scales.join('|')} (about 50, 1,000, 10,000, 100,000 applications)`,
      'small',
    )
    .option('--seed <n>', 'seed of the generated data', '42')
    .option(
      '--rate <n>',
      "requests per second the simulated site allows and grantflow uses (default: the pipeline file's, 150)",
    )
    .option('--pipeline <file>', 'settings of the demo sync (paths come from --dir)', defaultPipeline)
    .option('--dir <dir>', 'output directory (its warehouse and raw pages are replaced)', 'data/demo')
    .action(
      runAction(async (options: { scale: string; seed: string; rate?: string; dir: string; pipeline: string }) => {
        if (!scales.includes(options.scale as Scale))
          throw new ConfigError(`--scale must be one of ${scales.join(', ')}, got "${options.scale}"`);
        if (options.rate !== undefined && !(Number(options.rate) > 0))
          throw new ConfigError(`--rate must be a positive number, got "${options.rate}"`);
        // The environment is left out: a GRANTFLOW_WAREHOUSE meant for production must not redirect the demo. --rate
        // is validated with the pipeline's settings here, before the old warehouse is deleted and the site started.
        const base = await loadSettings(options.rate === undefined ? {} : { rate: Number(options.rate) }, {
          pipeline: options.pipeline,
          env: {},
        });
        const rate = base.rate;
        const seed = seedFlag(options.seed);
        const dir = options.dir;
        checkWritableDir(dir, 'demo directory', 'choose another one with --dir or fix its permissions');
        await refuseIfHeld(join(dir, 'warehouse.duckdb'));
        await rm(join(dir, 'warehouse.duckdb'), { force: true });
        await rm(join(dir, 'warehouse.duckdb.wal'), { force: true });
        await rm(join(dir, 'raw'), { recursive: true, force: true });
        await mkdir(dir, { recursive: true });

        process.stderr.write(`generating the ${options.scale} site (seed ${seed})...\n`);
        const sim = await startSimulator({ scale: options.scale as Scale, seed, rate });
        const credentials = join(dir, 'credentials.json');
        await writeFile(credentials, JSON.stringify(sim.credentials, null, 2), { mode: 0o600 });
        process.stderr.write(`simulated site at ${sim.url}; syncing...\n`);
        const settings = settingsSchema.parse({
          ...base,
          site: sim.url,
          credentials,
          warehouse: join(dir, 'warehouse.duckdb'),
          snapshots: join(dir, 'snapshots'),
          rawDir: join(dir, 'raw'),
          report: join(dir, 'report'),
          rate,
        });
        try {
          const result = await runSync({
            settings,
            logger: createLogger({ level: settings.logLevel }),
            afterSync: reportAfterSync,
          });
          process.stdout.write(formatSummary({ ...result, extra: result.after?.lines ?? [] }));
          process.stdout.write(await describeWarehouse(settings.warehouse));
          // Written after a sync that succeeded (exit 0 says it was).
          if (result.exitCode === 0) process.stdout.write(`\nreport: open ${resolve(dir, 'report', 'index.html')}\n`);
          return result.exitCode;
        } finally {
          await sim.close();
        }
      }),
    );
}

/**
 * The demo replaces its warehouse; one an analyst still has open in another process (a duckdb shell) must not be
 * deleted from under them: that is the same refusal a sync gives. Any other problem with the old file is replaced.
 */
async function refuseIfHeld(path: string): Promise<void> {
  if (!existsSync(path)) return;
  try {
    await (await openWarehouse(path)).close();
  } catch (e) {
    if (e instanceof LockedError) throw e;
  }
}

/** What an analyst wants first: tables with their row counts, then the top rows of each model. */
async function describeWarehouse(target: string): Promise<string> {
  const warehouse = await openWarehouse(target);
  const out: string[] = ['', `warehouse ${target}:`];
  try {
    const counts: string[] = [];
    for (const t of tables.filter((t) => t.kind !== 'bookkeeping')) {
      const [row] = await warehouse.query(`SELECT count(*) AS n FROM ${t.name}`);
      counts.push(`${t.name} ${String(row?.n ?? 0)}`);
    }
    out.push(`  ${counts.join(', ')}`);
    const models: [string, string][] = [
      [
        'award_rates',
        'SELECT program_name, applications, awarded, declined, award_rate, awarded_value FROM award_rates ORDER BY awarded_value DESC, program_id LIMIT 5',
      ],
      [
        'reviewer_load',
        'SELECT * FROM reviewer_load ORDER BY assigned DESC, reviewer_id, program_id, stage_id LIMIT 5',
      ],
      ['funding_flow', 'SELECT * FROM funding_flow ORDER BY transferred DESC, fund_id, program_id LIMIT 5'],
    ];
    for (const [name, sql] of models) {
      out.push('', `${name} (top 5):`);
      try {
        const rows = await warehouse.query(sql);
        const cols = Object.keys(rows[0] ?? {}).filter((c) => !c.startsWith('_'));
        out.push(`  ${cols.join(' | ')}`);
        for (const r of rows) out.push(`  ${cols.map((c) => String(r[c] ?? 'NULL')).join(' | ')}`);
      } catch (error) {
        out.push(`  (not available: ${(error as Error).message.split('\n')[0]})`);
      }
    }
  } finally {
    await warehouse.close();
  }
  return out.join('\n') + '\n';
}
