import { createHmac } from 'node:crypto';
import type { PersonalDataMode } from '../config/settings.ts';
import { ConfigError } from '../util/errors.ts';
import { registerSecret } from '../util/redact.ts';

/** The variable holding the key of the tokens: read from the environment only, never a setting, never stored. */
export const pseudonymKeyVariable = 'GRANTFLOW_PSEUDONYM_KEY';

/** Short keys are guessable: HMAC tokens of known emails could then be matched by trying keys. */
const minKeyLength = 16;

/**
 * The key from `env`, or null when it is unset or empty. Registered as a secret, so no log line, error or raw page
 * shows it. A key too short is a ConfigError (exit 2).
 */
export function readPseudonymKey(env: NodeJS.ProcessEnv = process.env): string | null {
  const key = env[pseudonymKeyVariable];
  if (key === undefined || key === '') return null;
  if (key.length < minKeyLength)
    throw new ConfigError(`${pseudonymKeyVariable} must be at least ${minKeyLength} characters (a random string)`);
  registerSecret(key);
  return key;
}

/** The key a mode needs: `pseudonymize` without one is a ConfigError (exit 2), said in one line. */
export function keyForMode(mode: PersonalDataMode, env: NodeJS.ProcessEnv = process.env): string | null {
  const key = readPseudonymKey(env);
  if (mode === 'pseudonymize' && key === null)
    throw new ConfigError(
      `personalData pseudonymize needs the token key in ${pseudonymKeyVariable} (a random string of at least ${minKeyLength} characters, kept as a secret: the same key gives the same tokens in every run); it is never stored`,
    );
  return key;
}

/**
 * What a token is computed from: a user id (a numeric identifier is always one) as `user:<id>`, any other identifier
 * as `text:<value>`, so the same person has the same token wherever the warehouse names them.
 */
export function tokenInput(numeric: boolean, value: string): string {
  return numeric ? `user:${value}` : `text:${value}`;
}

/** The row of the token table that tells whether the key changed since its tokens were computed. */
export const keyCheckInput = 'check:';

/** The token of `input`: `pz_` and 32 hex digits (128 bits) of HMAC-SHA256 under the key. */
export function pseudonymToken(key: string, input: string): string {
  return `pz_${createHmac('sha256', key).update(input, 'utf8').digest('hex').slice(0, 32)}`;
}
