import { resolve } from 'node:path';
import { settingSource } from './load-settings.ts';
import {
  envName,
  flagName,
  warehouseFile,
  settingKinds,
  urlPattern,
  type SettingKey,
  type Settings,
} from './settings.ts';

/**
 * What `grantflow config` prints: every effective setting, its value and where it came from (a flag, a GRANTFLOW_*
 * variable, the pipeline file or the default), secrets masked.
 */

/** Variables that hold secrets rather than settings: shown as set or not, never their value. */
export const secretVariables = [
  'GRANTFLOW_CLIENT_ID',
  'GRANTFLOW_CLIENT_SECRET',
  'GRANTFLOW_ACCESS_TOKEN',
  'GRANTFLOW_REFRESH_TOKEN',
  'GRANTFLOW_STATE_KEY',
  'GRANTFLOW_PSEUDONYM_KEY',
] as const;

const masked = '********';

/** A URL's password (postgres://user:secret@host) masked; anything else as it is. */
export function maskValue(value: string): string {
  if (!urlPattern.test(value) || !URL.canParse(value)) return value;
  const url = new URL(value);
  // Replaced in the text, so the rest of the URL reads exactly as it was given.
  let out = url.password === '' ? value : value.replace(`:${url.password}@`, `:${masked}@`);
  for (const [name, secret] of url.searchParams) {
    if (/pass|secret|token|key/i.test(name) && secret !== '')
      out = out
        .split(`=${encodeURIComponent(secret)}`)
        .join(`=${masked}`)
        .split(`=${secret}`)
        .join(`=${masked}`);
  }
  return out;
}

function valueText(value: unknown): string {
  if (value === undefined) return '(not set)';
  if (Array.isArray(value)) return value.some((v) => typeof v === 'object') ? JSON.stringify(value) : value.join(',');
  return maskValue(String(value));
}

export interface SettingLine {
  readonly key: string;
  readonly value: string;
  readonly from: string;
}

/** Each setting of `settings` (made by loadSettings) with its masked value and origin. */
export function describeSettings(
  settings: Partial<Settings>,
  env: NodeJS.ProcessEnv,
  pipeline: string | undefined,
): SettingLine[] {
  const lines: SettingLine[] = (Object.keys(settingKinds) as SettingKey[]).map((key) => {
    const source = settingSource(settings, key);
    const from =
      source === 'flag'
        ? `flag --${flagName(key)}`
        : source === 'environment'
          ? `variable ${envName(key)}`
          : source === 'pipeline file'
            ? `pipeline file ${pipeline ? resolve(pipeline) : ''}`
            : 'default';
    if (key === 'schema' && settings.warehouse !== undefined && warehouseFile(settings.warehouse) !== null)
      return duckdbSchemaLine(source === undefined ? undefined : String(settings.schema), from);
    return { key, value: valueText(settings[key]), from };
  });
  for (const name of secretVariables) {
    if (env[name]) lines.push({ key: name, value: masked, from: `variable ${name}` });
  }
  return lines;
}

/**
 * `schema` with a DuckDB warehouse: a DuckDB file keeps one site's tables in `main`, so the default (`public`) is not
 * in effect, and a schema given is read by status, report and query only (a portfolio site's), refused by the rest.
 */
function duckdbSchemaLine(given: string | undefined, from: string): SettingLine {
  if (given === undefined) return { key: 'schema', value: '(not used: a DuckDB file)', from };
  return { key: 'schema', value: given, from: `${from} (DuckDB: only status, report and query read it)` };
}
