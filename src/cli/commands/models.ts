import type { Command } from 'commander';

import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';

import { warehouseFile } from '../../config/settings.ts';
import { openConfiguredWarehouse, syncedBefore } from '../../warehouse/index.ts';

import type { Warehouse } from '../../warehouse/types.ts';

import {
  dataTests,
  hasErrorFailures,
  loadAllModels,
  loadAllSqlTests,
  runDataTests,
  runModels,
  selectModels,
  selectTests,
  type DataTestResult,
} from '../../models/index.ts';

import { commaList } from '../../util/comma-list.ts';

import { ConfigError, ExitCode } from '../../util/errors.ts';

import { createLogger } from '../../util/logger.ts';

import { runAction } from '../run-action.ts';

import { addSettingOptions, settingsFrom } from '../settings-options.ts';
import { tables } from '../../streams/registry.ts';
import { renderTable, unitColumns } from '../../util/text-table.ts';

const keys = [...warehouseSettingKeys, 'modelsDir', 'logLevel'] as const satisfies readonly SettingKey[];

type WarehouseAction = (w: Warehouse) => Promise<number>;

/** `models`: the model tables the command rebuilds, which the role must then own (`models test` rebuilds none). */
async function withWarehouse(
  options: Record<string, unknown>,
  fn: WarehouseAction,
  models?: readonly string[],
): Promise<number> {
  const settings = await settingsFrom(options, keys);
  const logger = createLogger({ level: settings.logLevel });
  // A warehouse a sync wrote: a mistyped path is an error, not a new empty warehouse with models over nothing.
  const warehouse = await openConfiguredWarehouse(settings, logger, {
    existingOnly: true,
    forWriting: true,
    ...(models ? { models } : {}),
  });
  try {
    await prepare(warehouse);
    // Idempotent; brings a warehouse an older version wrote up to the current tables.
    await warehouse.migrate(tables);
    return await fn(warehouse);
  } finally {
    await warehouse.close();
  }
}

/**
 * `models test` only reads: a DuckDB file is opened read-only, alongside analysts' read-only connections, and a
 * Postgres role needs only USAGE on the schema and SELECT on its tables, as for `status`; unless an older version
 * wrote the warehouse and it must be migrated first, which needs a writer (as `models run` does).
 */
async function withWarehouseToRead(options: Record<string, unknown>, fn: WarehouseAction): Promise<number> {
  const settings = await settingsFrom(options, keys);
  const logger = createLogger({ level: settings.logLevel });
  const reader = await openConfiguredWarehouse(settings, logger, { existingOnly: true, readOnly: true });
  try {
    await prepare(reader);
    if (!(await reader.needsMigration(tables))) return await fn(reader);
  } finally {
    await reader.close();
  }
  logger.info('the warehouse must be migrated before its data tests run: opening it to write');
  return withWarehouse(options, fn).catch((e: unknown) => {
    // A reader's role: say why a command that reads asks for a privilege to write.
    if (!(e instanceof ConfigError) || warehouseFile(settings.warehouse) !== null) throw e;
    throw new ConfigError(
      `${e.message}. An older grantflow version wrote this warehouse: it must be migrated before its data tests run ` +
        '(a sync or `models run` by a role that may write does it)',
    );
  });
}

/** Takes the run lock and refuses a database no sync has written. */
async function prepare(warehouse: Warehouse): Promise<void> {
  // A sync in progress would change the tables under the models (and rebuild them itself): one run at a time.
  await warehouse.acquireLock(`grantflow models (pid ${process.pid})`);
  // The migration would create every table in any database it is pointed at (an analyst's DuckDB file, a schema of
  // another application) and then build and test models over nothing, exit 0.
  if (!(await syncedBefore(warehouse)))
    throw new ConfigError(`${warehouse.description} holds no grantflow data yet; run \`grantflow sync\` first`);
}

export function formatTestResult(r: DataTestResult): string {
  const label =
    r.status === 'pass' ? 'PASS ' : r.status === 'error' ? 'ERROR' : r.severity === 'error' ? 'FAIL ' : 'WARN ';
  let line = `${label} ${r.name}`;
  if (r.status === 'fail')
    line += `  (${r.failing} failing row${r.failing === 1 ? '' : 's'}; sample: ${JSON.stringify(r.sample.slice(0, 3))})`;
  if (r.status === 'error') line += `  (${r.severity}: query failed: ${r.message ?? 'unknown error'})`;
  return line;
}

/**
 * The tests that did not pass, repeated after all the others with their sample rows (one per line), so a long run
 * need not be scrolled back through: failures and errors first, then warnings.
 */
export function formatFailureSummary(results: readonly DataTestResult[]): string {
  const notPassed = results.filter((r) => r.status !== 'pass');
  if (notPassed.length === 0) return '';
  const ordered = [
    ...notPassed.filter((r) => r.severity === 'error'),
    ...notPassed.filter((r) => r.severity === 'warn'),
  ];
  const lines = ['', `not passed (${ordered.length}):`];
  for (const r of ordered) {
    const label = r.status === 'error' ? 'ERROR' : r.severity === 'error' ? 'FAIL' : 'WARN';
    if (r.status === 'error') {
      lines.push(`${label} ${r.name}: query failed: ${r.message ?? 'unknown error'}`);
      continue;
    }
    const shown = r.sample.length < r.failing ? `, first ${r.sample.length}` : '';
    lines.push(`${label} ${r.name}: ${r.failing} failing row${r.failing === 1 ? '' : 's'}${shown}`);
    for (const row of r.sample) lines.push(`    ${JSON.stringify(row)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `--select a,b`: the names given, or undefined without the flag; an empty list is refused, not read as "all". */
function selection(options: Record<string, unknown>): string[] | undefined {
  if (options.select === undefined) return undefined;
  const names = commaList(String(options.select));
  if (names.length === 0) throw new ConfigError('--select must name at least one model; leave it out for every one');
  return names;
}

export function registerModels(program: Command): void {
  const models = program
    .command('models')
    .description('build the SQL models (models/*.sql and --models-dir) or run the data tests');
  const run = models
    .command('run')
    .description(
      'build every model as a table, in dependency order; with --select only the named ones (a model they read ' +
        'and is not selected must have been built before)',
    )
    .option('--pipeline <file>', 'pipeline JSON file [env GRANTFLOW_PIPELINE]')
    .option('--select <a,b>', 'build only these models, in dependency order');
  addSettingOptions(run, keys);
  run.action(
    runAction(async (options: Record<string, unknown>) => {
      const select = selection(options);
      const { modelsDir } = await settingsFrom(options, keys);
      // Checked before the warehouse is opened: a bad model file or an unknown name changes nothing.
      const all = loadAllModels(modelsDir);
      const chosen = select ? selectModels(all, select) : all;
      return withWarehouse(
        options,
        async (warehouse) => {
          const info = await runModels(warehouse, {
            ...(modelsDir ? { userDir: modelsDir } : {}),
            ...(select ? { only: select } : {}),
          });
          const built = info.models.map((m) => [m.name, `${m.rows} rows`, `${m.durationMs} ms`]);
          if (built.length > 0)
            process.stdout.write(
              renderTable(unitColumns(['model', 'rows', 'time']), built, { header: false }).join('\n') + '\n',
            );
          process.stdout.write(`${info.models.length} models built in ${info.durationMs} ms\n`);
          return ExitCode.ok;
        },
        chosen.map((m) => m.name),
      );
    }),
  );
  const test = models
    .command('test')
    .description(
      'run the data tests (keys, references, enums, money reconciliation, and --models-dir tests); exit 1 on an ' +
        'error-level failure, repeated at the end with sample rows. Reads only, unless an older version wrote the ' +
        'warehouse and it must be migrated first',
    )
    .option('--pipeline <file>', 'pipeline JSON file [env GRANTFLOW_PIPELINE]')
    .option('--select <a,b>', 'run only the SQL data tests that read these models, or that have these names');
  addSettingOptions(test, keys);
  test.action(
    runAction(async (options: Record<string, unknown>) => {
      const select = selection(options);
      const { modelsDir } = await settingsFrom(options, keys);
      const userDir = modelsDir ? { userDir: modelsDir } : {};
      const tests = select
        ? selectTests(select, loadAllModels(modelsDir), loadAllSqlTests(modelsDir))
        : dataTests(userDir);
      if (select && tests.length === 0)
        process.stdout.write(`no data test reads ${select.join(', ')}; nothing to run\n`);
      return withWarehouseToRead(options, async (warehouse) => {
        const results = await runDataTests(warehouse, { tests });
        for (const r of results) process.stdout.write(`${formatTestResult(r)}\n`);
        const count = (f: (r: DataTestResult) => boolean): number => results.filter(f).length;
        process.stdout.write(formatFailureSummary(results));
        process.stdout.write(
          `${count((r) => r.status === 'pass')} passed, ${count((r) => r.status !== 'pass' && r.severity === 'error')} failed, ` +
            `${count((r) => r.status !== 'pass' && r.severity === 'warn')} warnings\n`,
        );
        return hasErrorFailures(results) ? ExitCode.runFailed : ExitCode.ok;
      });
    }),
  );
}
