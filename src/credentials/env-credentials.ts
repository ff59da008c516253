import { ConfigError } from '../util/errors.ts';
import { parseCredentials } from './credential-pair.ts';
import { StateKey } from './state-key.ts';
import type { Credentials } from './types.ts';

/** The variables that carry a credential pair, by its fields. */
export const envKeys = {
  client_id: 'GRANTFLOW_CLIENT_ID',
  client_secret: 'GRANTFLOW_CLIENT_SECRET',
  access_token: 'GRANTFLOW_ACCESS_TOKEN',
  refresh_token: 'GRANTFLOW_REFRESH_TOKEN',
} as const;

/** True when the credentials come from environment variables (a CI runner with read-only secrets). */
export function credentialsFromEnv(env: NodeJS.ProcessEnv): boolean {
  return Object.values(envKeys).some((k) => env[k]);
}

/** What the operator does with a new credential set when the variables hold the pair (see CredentialStore). */
export const updateCiSecrets =
  'update the CI secrets GRANTFLOW_CLIENT_ID, GRANTFLOW_CLIENT_SECRET, GRANTFLOW_ACCESS_TOKEN and ' +
  'GRANTFLOW_REFRESH_TOKEN with it';

/** The state key read with each set of variables: the store keeping their rotations seals with it. */
const stateKeys = new WeakMap<Credentials, StateKey | null>();

export function envCredentials(env: NodeJS.ProcessEnv): Credentials {
  const missing = Object.values(envKeys).filter((k) => !env[k]);
  if (missing.length > 0) {
    throw new ConfigError(`credentials from the environment need all four variables; missing: ${missing.join(', ')}`);
  }
  const creds = parseCredentials(
    Object.fromEntries(Object.entries(envKeys).map(([field, key]) => [field, env[key]])),
    'GRANTFLOW_* environment variables',
  );
  // Read (and checked) with the variables, from the same environment: a bad key stops the run before it writes.
  stateKeys.set(creds, StateKey.fromEnv(env));
  return creds;
}

/**
 * The state key read with these variables (see envCredentials); for a pair read otherwise (a test's), the key of
 * this process's environment.
 */
export function stateKeyOf(fromEnv: Credentials): StateKey | null {
  return stateKeys.has(fromEnv) ? (stateKeys.get(fromEnv) ?? null) : StateKey.fromEnv(process.env);
}
