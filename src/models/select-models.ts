import { ConfigError } from '../util/errors.ts';
import { sqlSources } from './lineage.ts';
import type { ModelDef, SqlTestDef } from './model-files.ts';

/**
 * The models named (`--select a,b`), in dependency order; no others are added, not even what they read. An unknown
 * name is refused with the known ones listed.
 */
export function selectModels(models: readonly ModelDef[], names: readonly string[]): ModelDef[] {
  const unknown = names.filter((n) => !models.some((m) => m.name === n));
  if (unknown.length > 0)
    throw new ConfigError(
      `unknown model${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; known models: ${models.map((m) => m.name).join(', ')}`,
    );
  return models.filter((m) => names.includes(m.name));
}

/**
 * A selected model reads a model left out of the selection: its table must exist already (built by an earlier run),
 * or the selection fails before anything is built, naming what to add.
 */
export function checkUpstreamBuilt(selected: readonly ModelDef[], existing: ReadonlySet<string>): void {
  const chosen = new Set(selected.map((m) => m.name));
  for (const m of selected) {
    const missing = m.dependsOn.filter((d) => !chosen.has(d) && !existing.has(d));
    if (missing.length > 0)
      throw new ConfigError(
        `model ${m.name} reads ${missing.join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not built yet; ` +
          `select ${missing.length > 1 ? 'them' : 'it'} too (or run every model once)`,
      );
  }
}

/**
 * The SQL data tests `models test --select` names: a model's name selects the tests that read it, a test's name
 * that test. An unknown name is refused with the known models and tests listed.
 */
export function selectTests(
  names: readonly string[],
  models: readonly ModelDef[],
  tests: readonly SqlTestDef[],
): SqlTestDef[] {
  const modelNames = new Set(models.map((m) => m.name));
  const unknown = names.filter((n) => !modelNames.has(n) && !tests.some((t) => t.name === n));
  if (unknown.length > 0)
    throw new ConfigError(
      `unknown model or data test${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; ` +
        `known models: ${[...modelNames].join(', ')}; known data tests: ${tests.map((t) => t.name).join(', ')}`,
    );
  return tests.filter(
    (t) => names.includes(t.name) || sqlSources([t.sql], modelNames).some((source) => names.includes(source)),
  );
}
