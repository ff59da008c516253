import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { warehouseSettingKeys, type SettingKey } from '../../config/settings.ts';
import { credentialsSource, envCredentials, fileCredentialStore } from '../../pipeline/credentials.ts';
import { preflight, probeSiteWithoutCredentials } from '../../pipeline/preflight.ts';
import { createSiteClient } from '../../source/index.ts';
import {
  duckdbVersion,
  isNewDuckDBFile,
  openConfiguredWarehouse,
  SchemaNotYetCreated,
  syncedBefore,
} from '../../warehouse/index.ts';
import { checkWarehouseSite } from '../../pipeline/warehouse-site.ts';
import { checkSnapshotTarget } from '../../snapshot/index.ts';
import { modelTableNames } from '../../models/index.ts';
import { ConfigError, ExitCode, isGrantflowError } from '../../util/errors.ts';
import { createLogger } from '../../util/logger.ts';
import { redact } from '../../util/redact.ts';
import { checkWritableDir } from '../../util/writable-dir.ts';
import { runAction } from '../run-action.ts';
import { addSettings, settingsFrom } from '../settings-options.ts';

const keys = [
  'site',
  'credentials',
  ...warehouseSettingKeys,
  'snapshots',
  's3ForcePathStyle',
  'rate',
  'logLevel',
] as const satisfies readonly SettingKey[];

interface Check {
  readonly name: string;
  readonly run: () => Promise<string>;
}

export function registerDoctor(program: Command): void {
  const command = program
    .command('doctor')
    .description(
      'check the setup without syncing: credentials, site reachable and accepting them, warehouse writable (and its version) and not of another site, snapshot directory writable',
    );
  addSettings(command, keys);
  command.action(
    runAction(async (options: Record<string, unknown>) => {
      const settings = await settingsFrom(options, keys);
      const logger = createLogger({ level: settings.logLevel === 'info' ? 'warn' : settings.logLevel });
      const fromEnv = credentialsSource(settings, process.env) === 'environment';
      const checks: Check[] = [
        {
          name: 'credentials',
          run: async () => {
            if (fromEnv) {
              envCredentials(process.env);
              return 'from GRANTFLOW_* environment variables (rotations are kept in the warehouse)';
            }
            await fileCredentialStore(settings.credentials);
            const mode = (await stat(settings.credentials!)).mode & 0o777;
            return `${settings.credentials} (mode ${mode.toString(8)}${mode & 0o077 ? ': readable by others, run chmod 600' : ''})`;
          },
        },
        {
          name: 'site',
          run: async () => {
            if (!settings.site)
              throw new ConfigError('no site: pass --site URL (or GRANTFLOW_SITE, or "site" in the pipeline file)');
            if (fromEnv) {
              // Using them would rotate a pair the operator cannot rewrite: reachability and the API only.
              const seen = await probeSiteWithoutCredentials(settings.site);
              return `${settings.site} answers like the grant API (${seen}); the credentials were not sent (a sync uses them, keeping rotations in the warehouse)`;
            }
            const client = createSiteClient({
              baseUrl: settings.site,
              store: await fileCredentialStore(settings.credentials),
              rate: settings.rate,
              logger,
              maxRetries: 2,
            });
            try {
              await preflight(client);
              return `${settings.site} answers and accepts the credentials (${client.stats.refreshes} token refreshes)`;
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
              return `${resolve(settings.warehouse)} does not exist yet; the first sync creates it there (DuckDB ${duckdbVersion()})`;
            }
            let warehouse;
            try {
              // As a sync would open it, rebuilding the models.
              warehouse = await openConfiguredWarehouse(settings, logger, {
                checkOnly: true,
                models: modelTableNames(),
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
                checkWarehouseSite((await warehouse.listRuns(1))[0], settings.site, false, warehouse.description);
              const [v] = await warehouse.query('SELECT version() AS v');
              return `${warehouse.description} is writable; ${String(v?.v ?? '').split(' on ')[0]}`;
            } finally {
              await warehouse.close();
            }
          },
        },
        {
          name: 'snapshots',
          run: async () => {
            return checkSnapshotTarget(settings.snapshots, settings);
          },
        },
      ];
      let worst: number = ExitCode.ok;
      for (const check of checks) {
        try {
          process.stdout.write(`ok    ${check.name.padEnd(12)} ${redact(await check.run())}\n`);
        } catch (error) {
          const code = isGrantflowError(error) ? error.exitCode : ExitCode.runFailed;
          worst = Math.max(worst, code);
          process.stdout.write(
            `FAIL  ${check.name.padEnd(12)} ${redact(error instanceof Error ? error.message : String(error))}\n`,
          );
        }
      }
      return worst;
    }),
  );
}
