import { settingSource } from '../config/load-settings.ts';
import type { Settings } from '../config/settings.ts';
import { ConfigError } from '../util/errors.ts';
import { credentialsFromEnv, envKeys } from './env-credentials.ts';
import { StateKey, stateKeyVariable } from './state-key.ts';

/**
 * Which credentials a command uses. A credentials file wins when it was given as a flag (`--credentials FILE`):
 * flags win over variables. The GRANTFLOW_CLIENT_ID / _SECRET / _ACCESS_TOKEN / _REFRESH_TOKEN variables win
 * over a credentials file named in the pipeline file, as every variable wins over that file. A file named by
 * GRANTFLOW_CREDENTIALS next to those variables is ambiguous (both are variables): a ConfigError says to drop one.
 */
export function credentialsSource(
  settings: Pick<Settings, 'credentials'>,
  env: NodeJS.ProcessEnv,
): 'file' | 'environment' {
  if (!credentialsFromEnv(env)) return 'file';
  const fileFrom = settings.credentials === undefined ? undefined : settingSource(settings, 'credentials');
  if (fileFrom === 'flag') return 'file';
  if (fileFrom === 'environment') {
    const set = Object.values(envKeys).filter((k) => env[k]);
    throw new ConfigError(
      `credentials are given twice: GRANTFLOW_CREDENTIALS names a file and ${set.join(', ')} ${set.length > 1 ? 'are' : 'is'} ` +
        'set too; unset one of them (or pass --credentials FILE, which wins over both)',
    );
  }
  return 'environment';
}

/**
 * The environment as `runSync` should see it: without the GRANTFLOW_* credential variables when the credentials
 * file wins (see credentialsSource), since runSync decides by `credentialsFromEnv(env)` alone.
 */
export function environmentForCredentials(
  settings: Pick<Settings, 'credentials'>,
  env: NodeJS.ProcessEnv,
): NodeJS.ProcessEnv {
  if (credentialsSource(settings, env) === 'environment' || !credentialsFromEnv(env)) return env;
  const out = { ...env };
  for (const k of Object.values(envKeys)) delete out[k];
  return out;
}

/**
 * The sync summary's line on where the pair rotated from GRANTFLOW_* variables is kept: null when the credentials
 * come from a file (`env` as runSync sees it, see environmentForCredentials).
 */
export function storedPairNote(env: NodeJS.ProcessEnv): string | null {
  if (!credentialsFromEnv(env)) return null;
  return StateKey.fromEnv(env)
    ? `credentials: rotations are kept in the warehouse encrypted with ${stateKeyVariable}`
    : `credentials: rotations are kept in the warehouse UNENCRYPTED (table _grantflow_credentials): set ${stateKeyVariable} to encrypt them (docs/credentials.md)`;
}
