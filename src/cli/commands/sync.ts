import type { Command } from 'commander';
import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';
import { environmentForCredentials, refreshesSettled, storedPairNote } from '../../credentials/index.ts';
import { runSync, SyncStoppedError } from '../../pipeline/sync.ts';
import { reportAfterSync } from '../../report/after-sync.ts';
import { ConfigError, ExitCode, StoppedError } from '../../util/errors.ts';
import { readPortfolioSites, selectPortfolioSites } from '../../config/portfolio.ts';
import { runPortfolio } from '../../pipeline/portfolio.ts';
import { formatPortfolioSummary } from '../../pipeline/portfolio-summary.ts';
import { formatSummary } from '../../pipeline/summary.ts';
import { insecureTlsProblem } from '../exposed-secrets.ts';
import { credentialsModeWarning } from '../credentials-mode-warning.ts';
import { createLogger, type Logger } from '../../util/logger.ts';
import { fitForTerminal } from '../../util/pretty-log.ts';
import { runAction } from '../run-action.ts';
import { addSettings, settingsFrom } from '../settings-options.ts';

export const syncKeys: readonly SettingKey[] = [
  'site',
  'credentials',
  ...warehouseSettingKeys,
  'snapshots',
  's3ForcePathStyle',
  'rawDir',
  'landRaw',
  'keepRawRuns',
  'streams',
  'fullRefresh',
  'fullRefreshAfterDays',
  'fullRefreshMode',
  'maxDuration',
  'maxStreamDuration',
  'refreshReports',
  'refreshReportsTimeout',
  'siteMoved',
  'rate',
  'perPage',
  'detectPageSize',
  'concurrency',
  'siteTimeZone',
  'retainSnapshots',
  'personalData',
  'purgeDeletedAfter',
  'models',
  'modelsDir',
  'snapshot',
  'snapshotRaw',
  'report',
  'promote',
  'logLevel',
];

export function registerSync(program: Command): void {
  const command = program
    .command('sync')
    .summary('extract, load, model, test and snapshot a site (incremental, resumable)')
    .description(
      'Extract every stream of a site into the warehouse, run the SQL models and data tests, and write Parquet ' +
        'snapshots. Incremental by default: per-application calls only for new or changed applications. A killed ' +
        'run is resumed by the next one without refetching what it committed.',
    )
    .addHelpText(
      'after',
      `
Every option but --site-moved (a flag only) can also come from the GRANTFLOW_* variable shown, or from a pipeline
file (camelCase keys); flags win over variables, which win over the file (docs/settings.md lists them all).
Credentials may instead come from GRANTFLOW_CLIENT_ID, GRANTFLOW_CLIENT_SECRET, GRANTFLOW_ACCESS_TOKEN and
GRANTFLOW_REFRESH_TOKEN (rotations are kept in the warehouse); --credentials FILE wins over those variables, and
they win over a credentials file named in the pipeline file. A pipeline file listing "sites" is a portfolio:
every site syncs at once into a schema of its own (site_<name>), with "portfolio" views over them all;
--sites a,b syncs some (docs/portfolio.md).

Examples:
  grantflow sync --site https://yoursite.example.com --credentials creds.json
  grantflow sync --pipeline pipelines/example.json --streams applications,application_tasks --full-refresh

Exit codes:
  0  success, or paused by --max-duration (the next sync continues the run)
  1  the run failed or was partial (see the summary), or was interrupted by a signal
  2  bad usage or configuration, including credentials the site rejects (also mid-run: committed streams
     are kept)

On SIGINT or SIGTERM no new request starts and commits under way finish (a Postgres one waiting for another
session's table lock rolls back within 2 s); the next sync resumes the run. After the extraction no further
model, data test or snapshot starts, and a snapshot being written is abandoned, so the last good one stays
current. A second signal exits at once, once a token refresh under way is saved.`,
    );
  addSettings(command, syncKeys);
  command.option(
    '--sites <a,b>',
    'with a pipeline file listing "sites" (a portfolio): sync only these of them (default all; see docs/portfolio.md)',
  );
  command.option(
    '--allow-insecure-tls',
    'run even though NODE_TLS_REJECT_UNAUTHORIZED=0 turns certificate checks off (default: refuse, exit 2)',
  );
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const insecure = insecureTlsProblem(process.env);
      if (insecure && options.allowInsecureTls !== true) throw new ConfigError(insecure);
      const settings = await settingsFrom(options, syncKeys, undefined, true);
      const logger = createLogger({ level: settings.logLevel });
      const pipeline = (options.pipeline as string | undefined) ?? process.env.GRANTFLOW_PIPELINE;
      const portfolio = await readPortfolioSites(pipeline);
      if (portfolio) {
        const run = selectPortfolioSites(portfolio, options.sites as string | undefined, settings);
        return whileSignalsStop(logger, async (signal) => {
          const result = await runPortfolio({
            settings,
            sites: portfolio,
            run,
            logger,
            env: process.env,
            signal,
            afterSync: reportAfterSync,
          });
          process.stdout.write(fitForTerminal(formatPortfolioSummary(result)));
          return result.exitCode;
        });
      }
      if (options.sites !== undefined)
        throw new ConfigError('--sites needs a pipeline file listing "sites" (a portfolio; see docs/portfolio.md)');
      // --credentials FILE wins over GRANTFLOW_CLIENT_ID and friends (flags win over variables).
      const env = environmentForCredentials(settings, process.env);
      const note = storedPairNote(env);
      const modeWarning = await credentialsModeWarning(settings.credentials);
      if (modeWarning) logger.warn(modeWarning);
      return whileSignalsStop(logger, async (signal) => {
        try {
          // The report is written after the run is recorded, under its lock (the `report` setting).
          const result = await runSync({ settings, logger, env, signal, afterSync: reportAfterSync });
          const paused =
            result.status === 'paused'
              ? [
                  `paused: the time budget (--max-duration ${settings.maxDuration ?? ''}) ran out; what was fetched is committed and the next sync continues run ${result.runId} (models and snapshots wait until it completes)`,
                ]
              : [];
          const extra = [...paused, ...(result.after?.lines ?? []), ...(note ? [note] : [])];
          process.stdout.write(fitForTerminal(formatSummary({ ...result, client: result.client, extra })));
          return result.exitCode;
        } catch (error) {
          // Stopped mid-run: report what was committed, then the one line saying why (runAction prints it).
          if (error instanceof SyncStoppedError)
            process.stdout.write(
              fitForTerminal(
                formatSummary({
                  ...error.result,
                  extra: [...(error.result.after?.lines ?? []), ...(note ? [note] : [])],
                }),
              ),
            );
          throw error;
        }
      });
    }),
  );
}

/**
 * Runs `fn` with a signal that SIGINT or SIGTERM aborts (a stop: no new requests, commits under way finish); a second
 * signal exits at once.
 */
async function whileSignalsStop(logger: Logger, fn: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals === 2) {
      // A second signal: no more waiting for commits (they stay; the next sync resumes the run), but a token
      // refresh under way must save its new pair first: the site has already killed the old one.
      process.stderr.write(`grantflow: ${signal} again: exiting now; the next sync resumes the run\n`);
      void refreshesSettled().finally(() => process.exit(ExitCode.runFailed));
      return;
    }
    if (signals > 2) process.exit(ExitCode.runFailed);
    logger.info(
      { signal },
      'stopping: no new requests; commits under way finish, or roll back if waiting for a lock (send it again to exit at once)',
    );
    stop.abort(new StoppedError(`interrupted by ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await fn(stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
