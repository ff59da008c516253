import { Option, type Command } from 'commander';
import { portfolioSchema } from '../../config/portfolio.ts';
import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';
import { openConfiguredWarehouse } from '../../warehouse/index.ts';
import { ConfigError, ExitCode, firstLine, isGrantflowError } from '../../util/errors.ts';
import { createLogger } from '../../util/logger.ts';
import { runAction } from '../run-action.ts';
import { addSettings } from '../settings-options.ts';
import { addSiteOption, readTarget } from '../read-target.ts';
import { formatResult, queryFormats, type QueryFormat } from '../query-output.ts';
import { outputWidth } from '../../util/text-table.ts';

const keys = [...warehouseSettingKeys, 'logLevel'] as const satisfies readonly SettingKey[];

export function registerQuery(program: Command): void {
  const command = program
    .command('query')
    .argument('<sql>', 'one SQL statement that reads (SELECT, WITH ... SELECT, EXPLAIN; on DuckDB also DESCRIBE, SHOW)')
    .summary('run one read-only SQL statement on the warehouse and print its rows')
    .description(
      'Run one SQL statement that only reads, on a DuckDB file (opened read-only, so it runs beside analysts and ' +
        'is refused while a sync writes the file) or a Postgres schema (in a READ ONLY transaction), and print its ' +
        'rows: a table fitted to the terminal, or CSV or JSON for scripts. Unqualified names resolve in the ' +
        "warehouse's tables, then its models (schema analytics). A write, a second statement or an SQL error is one " +
        'line and exit 2. See docs/query.md.',
    )
    .addOption(
      new Option('--format <format>', 'table (fitted to the terminal), csv or json (an array of objects)')
        .choices(queryFormats)
        .default('table'),
    );
  addSiteOption(addSettings(command, keys));
  command.addHelpText(
    'after',
    `
Examples:
  grantflow query --warehouse data/demo/warehouse.duckdb "select count(*) as n from applications"
  grantflow query --format json "select program_name, award_rate from award_rates order by award_rate desc"
  grantflow query --format csv "select * from applications_current" > applications.csv
  grantflow query --pipeline portfolio.json --site north "select status, count(*) from applications group by 1"
  grantflow query --pipeline portfolio.json "select site, count(*) from applications group by site"
  grantflow query --warehouse postgres://analyst@db/grants --schema grants "select * from funds"

A table shows NULL as ∅ and cuts long values with … to fit the terminal (nothing is cut into a pipe or a file).
CSV leaves NULL empty and writes an empty string as "". JSON writes every number with the database's exact digits
(a BIGINT or DECIMAL too): a reader that parses numbers into doubles, such as JavaScript or jq, rounds those beyond
2^53 or 15 significant digits; read such columns as text (CAST(x AS VARCHAR)) or use --format csv.
With a portfolio's pipeline file and no --site, the statement reads schema ${portfolioSchema}, the views over every site.`,
  );
  command.action(
    runAction(async (sql: string, options: Record<string, unknown>) => {
      process.stdout.write(await runQuery(sql, options, outputWidth()));
      return ExitCode.ok;
    }),
  );
}

/**
 * The statement's result as printed: the command's work, apart from the process, for tests to call in process.
 * Bad input, a refused statement and an SQL error are each a ConfigError (exit 2).
 */
export async function runQuery(
  sql: string,
  options: Record<string, unknown>,
  width: number | undefined,
): Promise<string> {
  if (sql.trim() === '') throw new ConfigError('no SQL statement given');
  const settings = await readTarget(options, keys, 'views');
  const warehouse = await openConfiguredWarehouse(settings, createLogger({ level: settings.logLevel }), {
    existingOnly: true,
    readOnly: true,
  });
  try {
    const result = await warehouse.readStatement(sql).catch((e: unknown) => {
      if (isGrantflowError(e)) throw e;
      throw new ConfigError(`SQL error: ${firstLine(e)}`, { cause: e });
    });
    return formatResult(result, (options.format as QueryFormat | undefined) ?? 'table', width);
  } finally {
    await warehouse.close();
  }
}
