import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../util/errors.ts';
import { pathProblem } from '../util/path-problem.ts';
import {
  envName,
  flagName,
  flagOnlySettings,
  settingKinds,
  settingsSchema,
  urlPattern,
  type SettingKey,
  type Settings,
} from './settings.ts';
import { commaList } from '../util/comma-list.ts';

export type SettingSource = 'flag' | 'environment' | 'pipeline file';
type Raw = Partial<Record<SettingKey, unknown>>;

/** Where each setting of a loaded Settings object came from (defaults are not recorded). */
const sources = new WeakMap<object, ReadonlyMap<SettingKey, SettingSource>>();

/**
 * Where `loadSettings` found a setting: a flag, an environment variable or the pipeline file; undefined for a
 * default (or for settings not made by `loadSettings`, such as a copy). Lets a caller weigh a setting against
 * something that is not a setting (`--credentials FILE` against GRANTFLOW_CLIENT_ID and friends).
 */
export function settingSource(settings: Partial<Settings>, key: SettingKey): SettingSource | undefined {
  return sources.get(settings)?.get(key);
}

const allSettingKeys = Object.keys(settingKinds) as SettingKey[];
/** What a pipeline file may set. */
const fileSettingKeys = allSettingKeys.filter((k) => !flagOnlySettings.has(k));

/** Why a flag-only setting is refused from a variable or a pipeline file (see flagOnlySettings). */
function flagOnlyReason(key: SettingKey): string {
  const flag = `--${flagName(key)}`;
  return `not read: ${flag} is a flag only, for the one sync after a site moved (kept here it would accept another site's warehouse on every run)`;
}

/**
 * Merges defaults < pipeline file < environment < flags and validates once, at the edge. Every message names the
 * bad key and where it came from, so the operator knows what to fix; nothing is written before this succeeds.
 * Only `keys` (default: every setting) are read and validated: `status` must not fail on a GRANTFLOW_RATE meant for
 * sync. The pipeline file's unknown keys are refused all the same, since a typo there is meant for some command.
 */
export async function loadSettings<K extends SettingKey = SettingKey>(
  flags: Raw,
  options: {
    pipeline?: string;
    env?: NodeJS.ProcessEnv;
    keys?: readonly K[];
    /** The command reads a portfolio's `sites` (config/portfolio.ts) itself; others refuse a file listing them. */
    portfolio?: boolean;
  } = {},
): Promise<Pick<Settings, K>> {
  const env = options.env ?? process.env;
  const keys: readonly SettingKey[] = options.keys ?? allSettingKeys;
  const given = options.pipeline ?? env.GRANTFLOW_PIPELINE;
  const pipelinePath = given ? resolve(given) : undefined;
  const fromFile = pipelinePath ? await readPipelineFile(pipelinePath, options.portfolio === true) : {};
  const fromEnv = readEnv(env, keys);
  const origin = new Map<SettingKey, SettingSource>();
  const merged: Raw = {};
  for (const [source, values] of [
    ['pipeline file', fromFile],
    ['environment', fromEnv],
    ['flag', flags],
  ] as const) {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined || !keys.includes(k as SettingKey)) continue;
      merged[k as SettingKey] = v;
      origin.set(k as SettingKey, source);
    }
  }
  const schema = settingsSchema.pick(Object.fromEntries(keys.map((k) => [k, true])) as Record<SettingKey, true>);
  const parsed = schema.safeParse(merged);
  if (!parsed.success) throw new ConfigError(describeIssues(parsed.error, origin, pipelinePath));
  checkOverridden(
    [
      ['pipeline file', fromFile],
      ['environment', fromEnv],
    ],
    keys,
    origin,
    pipelinePath,
  );
  const settings = parsed.data as Pick<Settings, K>;
  resolvePaths(settings);
  sources.set(settings, origin);
  return settings;
}

/**
 * A value a higher source overrides is validated all the same: a bad pipeline key hidden by a flag (or a bad
 * GRANTFLOW_* variable hidden by a flag) would otherwise stop the run the day that flag is dropped, far from the
 * edit that broke it. Only the command's own keys, as for the values in effect.
 */
function checkOverridden(
  layers: readonly (readonly [SettingSource, Raw])[],
  keys: readonly SettingKey[],
  origin: ReadonlyMap<SettingKey, SettingSource>,
  pipelinePath?: string,
): void {
  for (const [source, values] of layers) {
    const hidden = (Object.keys(values) as SettingKey[]).filter(
      (k) => values[k] !== undefined && keys.includes(k) && origin.get(k) !== source,
    );
    if (hidden.length === 0) continue;
    const schema = settingsSchema.pick(Object.fromEntries(hidden.map((k) => [k, true])) as Record<SettingKey, true>);
    const parsed = schema.safeParse(Object.fromEntries(hidden.map((k) => [k, values[k]])));
    if (parsed.success) continue;
    const where = new Map(hidden.map((k) => [k, source]));
    const bad = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? '')))];
    const by = bad.map((k) => describeSource(k, origin.get(k as SettingKey), pipelinePath)).join(', ');
    throw new ConfigError(
      `${describeIssues(parsed.error, where, pipelinePath)} (overridden by ${by}, but it must be valid all the same)`,
    );
  }
}

async function readPipelineFile(path: string, portfolio: boolean): Promise<Raw> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : pathProblem(error, dirname(path));
    throw new ConfigError(`pipeline file ${path} cannot be read (${why})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`pipeline file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`pipeline file ${path} must hold a JSON object of settings`);
  }
  // A portfolio's sites are read by the commands that run one (config/portfolio.ts); any other would ignore them.
  if ('sites' in value && !portfolio)
    throw new ConfigError(
      `pipeline file ${path} lists "sites" (a portfolio), which only sync and doctor read; give this command one site's settings`,
    );
  // "$comment" keys document a pipeline file without being settings.
  const settings = Object.fromEntries(
    Object.entries(value).filter(([k]) => !k.startsWith('$') && k !== 'sites'),
  ) as Raw;
  const unknown = Object.keys(settings).filter((k) => !(k in settingKinds));
  if (unknown.length > 0) {
    throw new ConfigError(
      `pipeline file ${path} has unknown setting${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}; known: ${fileSettingKeys.join(', ')}`,
    );
  }
  for (const key of Object.keys(settings) as SettingKey[]) {
    if (flagOnlySettings.has(key)) throw new ConfigError(`"${key}" in pipeline file ${path} ${flagOnlyReason(key)}`);
  }
  // A pipeline file names its paths relative to its own folder, so it works from any working directory (cron).
  const folder = dirname(resolve(path));
  for (const key of pathSettings) {
    const v = settings[key];
    if (typeof v === 'string' && v !== '' && !isAbsolute(v) && !urlPattern.test(v)) {
      settings[key] = resolve(folder, v);
    }
  }
  return settings;
}

/** Settings that are file or directory paths (the warehouse may instead be a postgres:// URL, left as it is). */
const pathSettings = [
  'credentials',
  'warehouse',
  'snapshots',
  'rawDir',
  'report',
  'modelsDir',
] as const satisfies readonly SettingKey[];

/**
 * Paths from flags, variables and defaults are relative to the working directory: resolved here, so every message
 * names the path that was used (a cron job's working directory is not the operator's shell's). Those of a pipeline
 * file are resolved against its folder as it is read.
 */
function resolvePaths(settings: Partial<Settings>): void {
  for (const key of pathSettings) {
    const v = settings[key];
    if (typeof v === 'string' && v !== '' && !isAbsolute(v) && !urlPattern.test(v)) settings[key] = resolve(v);
  }
}

function readEnv(env: NodeJS.ProcessEnv, keys: readonly SettingKey[]): Raw {
  const out: Raw = {};
  for (const key of keys) {
    const text = env[envName(key)];
    if (text === undefined || text === '') continue;
    if (flagOnlySettings.has(key)) throw new ConfigError(`environment variable ${envName(key)} ${flagOnlyReason(key)}`);
    out[key] = parseSettingText(key, text, `environment variable ${envName(key)}`);
  }
  return out;
}

/** Parses a flag or environment string into the setting's type. */
export function parseSettingText(key: SettingKey, text: string, where: string): unknown {
  switch (settingKinds[key]) {
    case 'number': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) throw new ConfigError(`${where} must be a number, got "${text}"`);
      return n;
    }
    case 'boolean':
      if (/^(1|true|yes|on)$/i.test(text)) return true;
      if (/^(0|false|no|off)$/i.test(text)) return false;
      throw new ConfigError(`${where} must be true or false, got "${text}"`);
    case 'list':
      return commaList(text);
    case 'json':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new ConfigError(`${where} must be JSON, got "${text.length > 60 ? `${text.slice(0, 57)}...` : text}"`);
      }
    default:
      return text;
  }
}

function describeIssues(
  error: z.ZodError,
  origin: ReadonlyMap<SettingKey, SettingSource>,
  pipelinePath?: string,
): string {
  return error.issues
    .map((issue) => {
      const key = String(issue.path[0] ?? '');
      return `${describeSource(key, origin.get(key as SettingKey), pipelinePath)}: ${issue.message}`;
    })
    .join('; ');
}

/** Where a setting was given, as the operator would find it: `--rate`, `GRANTFLOW_RATE` or the pipeline file's key. */
function describeSource(key: string, source: SettingSource | undefined, pipelinePath?: string): string {
  return source === 'environment'
    ? `environment variable ${envName(key)}`
    : source === 'flag'
      ? `--${flagName(key)}`
      : `"${key}" in pipeline file ${pipelinePath ?? ''}`;
}
