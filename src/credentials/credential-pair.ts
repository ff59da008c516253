import { ConfigError } from '../util/errors.ts';
import { registerSecret } from '../util/redact.ts';
import type { Credentials } from './types.ts';

const keys = ['client_id', 'client_secret', 'access_token', 'refresh_token'] as const;

/** Registers the secret parts of a credential set for redaction. */
export function registerCredentialSecrets(c: Credentials): void {
  registerSecret(c.client_secret);
  registerSecret(c.access_token);
  registerSecret(c.refresh_token);
}

/** Checks the shape of parsed credentials; the message names the problem, never a value. */
export function parseCredentials(value: unknown, where: string): Credentials {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${where} must hold a JSON object with ${keys.join(', ')}`);
  }
  const record = value as Record<string, unknown>;
  for (const key of keys) {
    const v = record[key];
    if (v === undefined || v === null) throw new ConfigError(`${where} is missing "${key}" (a non-empty string)`);
    // The type is named, never the value (it may be a secret).
    if (typeof v !== 'string') {
      const type = Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
      throw new ConfigError(`${where}: "${key}" must be a string (in quotes), not ${type}`);
    }
    if (v.length === 0) throw new ConfigError(`${where}: "${key}" is empty (it must be a non-empty string)`);
  }
  const c: Credentials = {
    client_id: record.client_id as string,
    client_secret: record.client_secret as string,
    access_token: record.access_token as string,
    refresh_token: record.refresh_token as string,
  };
  registerCredentialSecrets(c);
  return c;
}
