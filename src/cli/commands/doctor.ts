import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  checkClient,
  ClientCheckUndecided,
  createSiteClient,
  credentialsSource,
  envCredentials,
  fileCredentialStore,
  StateKey,
  stateKeyVariable,
  WarehouseCredentialStore,
} from '../../credentials/index.ts';
import { selectStreams } from '../../streams/registry.ts';
import {
  AccessTokenRefused,
  preflight,
  probeSiteWithoutCredentials,
  SiteUnavailableError,
} from '../../source/index.ts';
import {
  duckdbVersion,
  isNewDuckDBFile,
  openConfiguredWarehouse,
  SchemaNotYetCreated,
  syncedBefore,
  warehouseMayHoldCredentials,
} from '../../warehouse/index.ts';
import { checkWarehouseSite } from '../../pipeline/warehouse-site.ts';
import { checkSnapshotTarget } from '../../snapshot/index.ts';
import { modelTableNames } from '../../models/index.ts';
import { ConfigError, ExitCode, GrantflowError, isGrantflowError } from '../../util/errors.ts';
import { isJsonObject, type JsonValue } from '../../util/json.ts';
import { createLogger, type Logger } from '../../util/logger.ts';
import { parseTimestamp } from '../../normalize/index.ts';
import { warehouseFile, type Settings } from '../../config/settings.ts';
import { readPortfolioSites, selectPortfolioSites, siteSchema } from '../../config/portfolio.ts';
import { siteEnvironment, siteSettings } from '../../pipeline/portfolio.ts';
import { redact } from '../../util/redact.ts';
import { checkWritableDir } from '../../util/writable-dir.ts';
import { commandLinePasswordProblem, insecureTlsProblem } from '../exposed-secrets.ts';
import { runAction } from '../run-action.ts';
import { addSettings, settingsFrom } from '../settings-options.ts';
import { syncKeys } from './sync.ts';
import { renderTable, type TableColumn } from '../../util/text-table.ts';

/** Every sync setting: a sync command line pasted after `grantflow doctor` is checked as that sync would run. */
const keys = syncKeys;

/** A finding that is no failure but wants attention (exit code unchanged). */
class Warning {
  constructor(readonly message: string) {}
}

interface Check {
  readonly name: string;
  readonly run: () => Promise<string | Warning>;
}

export function registerDoctor(program: Command): void {
  const command = program
    .command('doctor')
    .description(
      'check the setup without syncing: settings, credentials (the client id and secret checked without rotating anything), site reachable and accepting them, warehouse writable (and its version) and not of another site, the stored credential pair and its key, the time zone timestamps without one are read in (and how many the last run read so), snapshot and raw page directories writable. Takes every sync option: put doctor in place of sync in a sync command line',
    );
  addSettings(command, keys);
  command.option('--sites <a,b>', 'with a pipeline file listing "sites" (a portfolio): check only these of them');
  // Taken as sync takes it, so a pasted sync command line works; the exposure check still warns.
  command.option('--allow-insecure-tls', 'as for sync: certificate checks off is still reported, as a warning');
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const settings = await settingsFrom(options, keys, undefined, true);
      const logger = createLogger({ level: settings.logLevel === 'info' ? 'warn' : settings.logLevel });
      const pipeline = (options.pipeline as string | undefined) ?? process.env.GRANTFLOW_PIPELINE;
      const portfolio = await readPortfolioSites(pipeline);
      if (!portfolio) {
        if (options.sites !== undefined)
          throw new ConfigError('--sites needs a pipeline file listing "sites" (a portfolio; see docs/portfolio.md)');
        return runChecks(settings, process.env, logger, options.warehouse);
      }
      // Every site of a portfolio, as its sync would run (pipeline/portfolio.ts): its own schema, folders, credentials.
      let worst: number = ExitCode.ok;
      for (const site of selectPortfolioSites(portfolio, options.sites as string | undefined, settings)) {
        process.stdout.write(`site ${site.name} (${site.site}, schema ${siteSchema(site.name)})\n`);
        const env = siteEnvironment(process.env, site);
        if (env instanceof ConfigError) {
          process.stdout.write(checkLine('FAIL', 'credentials', env.message));
          worst = Math.max(worst, env.exitCode);
          continue;
        }
        worst = Math.max(worst, await runChecks(siteSettings(settings, site), env, logger, options.warehouse));
      }
      return worst;
    }),
  );
}

/** Every check of one site's setup, one line each; returns the worst exit code. */
async function runChecks(
  settings: Settings & { readonly siteSchema?: string },
  env: NodeJS.ProcessEnv,
  logger: Logger,
  warehouseFlag: unknown,
): Promise<number> {
  const fromEnv = credentialsSource(settings, env) === 'environment';
  const site = settings.site?.replace(/\/+$/, '');
  const noSite = (): never => {
    throw new ConfigError('no site: pass --site URL (or GRANTFLOW_SITE, or "site" in the pipeline file)');
  };
  /** Checks that need the site say so once, in the site check; the others are not run. */
  const notWithoutSite = new Warning('not checked without a site (see the site check)');
  const checks: Check[] = [
    {
      name: 'exposure',
      run: async () => {
        const problems = [insecureTlsProblem(env), commandLinePasswordProblem(warehouseFlag)].filter((p) => p !== null);
        return problems.length
          ? new Warning(problems.join('; '))
          : 'certificate checks on, no password on the command line';
      },
    },
    {
      name: 'streams',
      run: () => {
        const streams = selectStreams(settings.streams ?? null);
        const full = settings.fullRefresh ? ', full refresh' : '';
        return Promise.resolve(
          settings.streams ? `${streams.map((d) => d.name).join(', ')}${full}` : `all ${streams.length}${full}`,
        );
      },
    },
    {
      name: 'credentials',
      run: async () => {
        if (fromEnv) {
          envCredentials(env);
          const where = 'from GRANTFLOW_* environment variables; their rotations are kept in the warehouse';
          const file = warehouseFile(settings.warehouse);
          const duckdb = file === null ? null : duckdbLosesPair(file);
          if (StateKey.fromEnv(env))
            return duckdb
              ? new Warning(`${where}, encrypted with ${stateKeyVariable}; ${duckdb}`)
              : `${where}, encrypted with ${stateKeyVariable}`;
          return new Warning(
            `${where} UNENCRYPTED (table _grantflow_credentials, which anyone who may read the warehouse can read): set ${stateKeyVariable} to encrypt them (docs/credentials.md)${duckdb ? `; ${duckdb}` : ''}`,
          );
        }
        await fileCredentialStore(settings.credentials);
        const mode = (await stat(settings.credentials!)).mode & 0o777;
        const text = `${settings.credentials} (mode ${mode.toString(8)})`;
        if (mode & 0o077)
          return new Warning(`${text}: other users may read or change it; run chmod 600 ${settings.credentials}`);
        return text;
      },
    },
    {
      name: 'client',
      run: async () => {
        if (!site) return notWithoutSite;
        const creds = fromEnv ? envCredentials(env) : await (await fileCredentialStore(settings.credentials)).load();
        const advice = fromEnv
          ? 'update the CI secrets GRANTFLOW_CLIENT_ID and GRANTFLOW_CLIENT_SECRET with them'
          : `put them in ${settings.credentials}`;
        const found = await checkClient(site, creds, advice);
        return found instanceof ClientCheckUndecided ? new Warning(found.message) : found;
      },
    },
    {
      name: 'site',
      run: async () => {
        if (!site) return noSite();
        if (fromEnv) {
          // Using them would rotate a pair the operator cannot rewrite: reachability and the API only.
          const seen = await probeSiteWithoutCredentials(site);
          return `${site} answers like the grant API (${seen}); no token was sent (a sync uses them, keeping rotations in the warehouse)`;
        }
        const client = createSiteClient({
          baseUrl: site,
          store: await fileCredentialStore(settings.credentials),
          rate: settings.rate,
          logger,
          maxRetries: 2,
          // A refresh rotates the pair: one here would leave any other copy of this file (the one CI uses) dead.
          refreshTokens: false,
        });
        try {
          await preflight(client);
          return `${site} answers and accepts the access token in ${settings.credentials} (nothing was refreshed)`;
        } catch (error) {
          // The client check's advice for a failure that may pass (checkClient's `unreachable`).
          if (error instanceof SiteUnavailableError)
            throw new GrantflowError(`${error.message}; try again later`, error.exitCode, error.code, { cause: error });
          if (!(error instanceof AccessTokenRefused)) throw error;
          return new Warning(
            `${site} refused the access token in ${settings.credentials} (HTTP 401: expired, or revoked); doctor refreshes nothing: the next sync refreshes it with the refresh token, which rotates the pair and saves the new one in ${settings.credentials} (only that refresh can tell whether the refresh token still works)`,
          );
        } finally {
          await client.close();
        }
      },
    },
    {
      name: 'warehouse',
      run: async () => {
        // Syncs nothing, so creates nothing: a DuckDB file that does not exist yet is checked by its directory.
        if (isNewDuckDBFile(settings.warehouse)) {
          checkWritableDir(
            dirname(resolve(settings.warehouse)),
            'warehouse directory',
            'choose another --warehouse or fix its permissions',
          );
          return `${resolve(settings.warehouse)} does not exist yet; the first sync creates it there (DuckDB ${await duckdbVersion()})`;
        }
        let warehouse;
        try {
          // As a sync would open it, rebuilding the models.
          warehouse = await openConfiguredWarehouse(settings, logger, {
            checkOnly: true,
            models: modelTableNames(settings.modelsDir),
          });
        } catch (e) {
          if (e instanceof SchemaNotYetCreated) return e.message;
          throw e;
        }
        try {
          await warehouse.acquireLock(`grantflow doctor (pid ${process.pid})`);
          await warehouse.exec('CREATE TABLE _grantflow_doctor (x INTEGER); DROP TABLE _grantflow_doctor;');
          // A sync refuses a warehouse of another site (exit 2): a setup doctor passes must not be one sync refuses.
          if (settings.site && (await syncedBefore(warehouse)))
            checkWarehouseSite(
              (await warehouse.listRuns(1))[0],
              settings.site,
              settings.siteMoved,
              warehouse.description,
            );
          const [v] = await warehouse.query('SELECT version() AS v');
          return `${warehouse.description} is writable; ${String(v?.v ?? '').split(' on ')[0]}`;
        } finally {
          await warehouse.close();
        }
      },
    },
    {
      name: 'stored pair',
      run: async () => {
        if (!site) return notWithoutSite;
        if (!(await warehouseMayHoldCredentials(settings, site, logger)))
          return `none stored for ${site} yet: the first sync refreshes with the variables and stores the pair it gets`;
        const warehouse = await openConfiguredWarehouse(settings, logger, { existingOnly: true, readOnly: true });
        try {
          const store = new WarehouseCredentialStore(warehouse, site, envCredentials(env), logger);
          const state = await store.storedState();
          if (state === 'none') return `none stored for ${site} yet: the first sync stores the pair it gets`;
          if (state === 'older')
            return `the pair stored for ${site} is of an older credential set: the next sync starts from the variables' new set`;
          if (state === 'encrypted')
            return `the pair stored for ${site} is encrypted and opens with ${stateKeyVariable}`;
          return new Warning(
            store.encrypted
              ? `the pair stored for ${site} is unencrypted: the next sync rewrites it encrypted with ${stateKeyVariable}`
              : `the pair stored for ${site} is UNENCRYPTED: set ${stateKeyVariable} and the next sync encrypts it`,
          );
        } finally {
          await warehouse.close();
        }
      },
    },
    {
      name: 'time zone',
      run: async () => {
        const zone = settings.siteTimeZone;
        parseTimestamp('2024-01-01T00:00:00', zone); // an unknown zone fails here, as a sync would
        const none = `timestamps without a zone are read in ${zone} (--site-time-zone)`;
        if (isNewDuckDBFile(settings.warehouse)) return `${none}; no run yet`;
        let warehouse;
        try {
          warehouse = await openConfiguredWarehouse(settings, logger, { checkOnly: true, readOnly: true });
        } catch (e) {
          if (e instanceof SchemaNotYetCreated) return `${none}; no run yet`;
          throw e;
        }
        try {
          const last = (await syncedBefore(warehouse)) ? (await warehouse.listRuns(1))[0] : undefined;
          const seen = last === undefined ? null : naiveSeen(last.summary);
          if (last === undefined || seen === null) return `${none}; no finished run has recorded how many yet`;
          const read = `the last run (${last.runId}) read ${seen.count} without a zone in ${seen.zone}`;
          if (seen.count > 0 && seen.zone !== zone)
            return new Warning(`${read}, but this setup reads them in ${zone}: one of the two is wrong`);
          return `${none}; ${read}`;
        } finally {
          await warehouse.close();
        }
      },
    },
    {
      name: 'snapshots',
      run: async () => {
        if (!settings.snapshot) return 'not written (--snapshot false)';
        return checkSnapshotTarget(settings.snapshots, settings);
      },
    },
    {
      name: 'raw pages',
      run: () => {
        if (!settings.landRaw) return Promise.resolve('not kept (--land-raw false)');
        checkWritableDir(
          settings.rawDir,
          'raw page directory',
          'choose another one with --raw-dir or fix its permissions',
        );
        return Promise.resolve(`${resolve(settings.rawDir)} is writable`);
      },
    },
  ];
  let worst: number = ExitCode.ok;
  // A credentials file keeps its own rotations: only variables' rotations are stored in the warehouse.
  for (const check of checks.filter((c) => fromEnv || c.name !== 'stored pair')) {
    try {
      const found = await check.run();
      const [mark, text] = found instanceof Warning ? ['warn', found.message] : ['ok', found];
      process.stdout.write(checkLine(mark, check.name, redact(text)));
    } catch (error) {
      const code = isGrantflowError(error) ? error.exitCode : ExitCode.runFailed;
      worst = Math.max(worst, code);
      process.stdout.write(
        checkLine('FAIL', check.name, redact(error instanceof Error ? error.message : String(error))),
      );
    }
  }
  return worst;
}

/**
 * Variables cannot be rewritten, so after the first refresh only the warehouse holds a working pair: a DuckDB file on
 * a runner that starts empty (CI without a kept disk) takes it along, and the next run meets invalid_grant.
 */
function duckdbLosesPair(file: string): string {
  return (
    `but the warehouse ${resolve(file)} is a DuckDB file: a runner that does not keep it between runs (one that ` +
    'starts empty, as CI runners do) loses the rotated pair, and the next run fails with invalid_grant; keep the file ' +
    'on a disk kept between runs (not the Actions cache, which may evict or fork it: docs/credentials.md), or use a ' +
    'PostgreSQL warehouse (as examples/github-actions.yml does), or a credentials file'
  );
}

/** How many timestamps without a zone a finished run read, and in which zone (from its `_grantflow_runs` summary). */
function naiveSeen(summary: JsonValue | undefined): { count: number; zone: string } | null {
  // Runs from before this was recorded, and runs not finished, say nothing of it.
  if (!isJsonObject(summary) || !Array.isArray(summary.streams) || typeof summary.siteTimeZone !== 'string')
    return null;
  const zone = summary.siteTimeZone;
  let count = 0;
  for (const s of summary.streams)
    if (isJsonObject(s) && typeof s.naiveTimestamps === 'number') count += s.naiveTimestamps;
  return { count, zone };
}

/** The columns of a check's line, fixed so lines printed as each check ends line up. */
const checkColumns: readonly TableColumn[] = [
  { header: 'mark', width: 5, align: 'left' },
  { header: 'check', width: 12, align: 'left' },
  { header: 'result', align: 'left' },
];

/** `ok    site         …`: one check's line; a site's text in it (an error body) shows its control characters escaped. */
function checkLine(mark: string, name: string, text: string): string {
  return renderTable(checkColumns, [[mark, name, text]], { header: false, gap: 1 }).join('\n') + '\n';
}
