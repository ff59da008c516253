import type { Command } from 'commander';

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

import { dirname, join, resolve } from 'node:path';

import { dictionaryPath, renderDataDictionary } from '../../docs/data-dictionary.ts';

import { renderSettingsReference, settingsReferencePath } from '../../docs/settings-reference.ts';

import { renderDbtSources } from '../../docs/dbt-sources.ts';

import { analyticsSchemaFor } from '../../warehouse/index.ts';

import { ConfigError, ExitCode } from '../../util/errors.ts';

import { runAction } from '../run-action.ts';

import { pathProblem } from '../../util/path-problem.ts';

import { addSettings, settingsFrom } from '../settings-options.ts';

import { commandsBySetting } from '../settings-usage.ts';

import { promotedCatalog } from '../../normalize/promotions.ts';

import { promotionsOf } from '../../pipeline/promote-step.ts';
import { tables } from '../../streams/registry.ts';

/**
 * Writes a generated page unless it already holds `fresh`; with `check`, only says whether it does (exit 1 when
 * stale, for CI).
 */
function writeGenerated(options: { check?: boolean; out: string }, fresh: string, command: string): ExitCode {
  const path = resolve(options.out);
  let current: string | null = null;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    current = null;
  }
  if (options.check) {
    if (current === fresh) {
      process.stdout.write(`${path} is up to date\n`);
      return ExitCode.ok;
    }
    process.stderr.write(`grantflow: ${path} is stale; run \`${command}\` and commit the result\n`);
    return ExitCode.runFailed;
  }
  if (current === fresh) {
    process.stdout.write(`${path} already up to date\n`);
    return ExitCode.ok;
  }
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, fresh);
  } catch (e) {
    throw new ConfigError(`cannot write ${path} (${pathProblem(e, dirname(path))}); choose another path with --out`, {
      cause: e,
    });
  }
  process.stdout.write(`wrote ${path}\n`);
  return ExitCode.ok;
}

export function registerDocs(program: Command): void {
  const docs = program.command('docs').description('generated documentation');
  const dictionary = docs
    .command('dictionary')
    .description('regenerate docs/data-dictionary.md from the table catalog and the model headers')
    .option('--check', 'do not write; exit 1 when the file is stale')
    .option('--out <file>', 'where the dictionary lives', dictionaryPath);
  addSettings(dictionary, ['promote']);
  dictionary.action(
    runAction(async (options: { check?: boolean; out: string } & Record<string, unknown>) => {
      // With the `promote` setting, the promoted columns show in their tables.
      const settings = await settingsFrom(options, ['promote']);
      const fresh = renderDataDictionary(promotedCatalog(tables, promotionsOf(settings)));
      return writeGenerated(options, fresh, 'grantflow docs dictionary');
    }),
  );
  const dbt = docs
    .command('dbt')
    .description(
      'write a dbt sources.yml (<dir>/sources.yml): every table and model with its columns and descriptions, and ' +
        'tests on keys (unique, not_null), references (relationships) and enums (accepted_values)',
    )
    .requiredOption('--out <dir>', "the folder of sources.yml (a dbt project's models/ folder, say)")
    .option(
      '--schema <name>',
      "the warehouse's schema (DuckDB: main; Postgres: public, or the sync's --schema)",
      'main',
    )
    .option('--check', 'do not write; exit 1 when the file is stale');
  addSettings(dbt, ['promote']);
  dbt.action(
    runAction(async (options: { check?: boolean; out: string; schema: string } & Record<string, unknown>) => {
      const settings = await settingsFrom(options, ['promote']);
      // `main` and `public` are the engines' default schemas, beside which the models live in `analytics`.
      const analyticsSchema = analyticsSchemaFor(options.schema, options.schema === 'main' ? 'main' : 'public');
      const fresh = renderDbtSources(
        { schema: options.schema, analyticsSchema },
        promotedCatalog(tables, promotionsOf(settings)),
      );
      return writeGenerated(
        { ...(options.check ? { check: true } : {}), out: join(options.out, 'sources.yml') },
        fresh,
        'grantflow docs dbt',
      );
    }),
  );
  docs
    .command('settings')
    .description("regenerate docs/settings.md from the settings' help and the commands that read them")
    .option('--check', 'do not write; exit 1 when the file is stale')
    .option('--out <file>', 'where the reference lives', settingsReferencePath)
    .action(
      runAction(async (options: { check?: boolean; out: string }) => {
        const fresh = renderSettingsReference(commandsBySetting(program));
        return writeGenerated(options, fresh, 'grantflow docs settings');
      }),
    );
}
