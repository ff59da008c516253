import { modelSources } from './lineage.ts';

import type { ModelDef } from './model-files.ts';
import { mappingOf, selectStreams, tables as catalog } from '../streams/registry.ts';

/** Loaded by every sync whatever its streams (extract-run.ts loadEnumLabels). */
const everyRun = ['enum_labels'];

/**
 * The tables a sync of `streams` may write, from the catalog: the tables each stream (and a fan-out stream's parent,
 * which is synced with it) owns, plus every table a column of those references, since a reference writes a row
 * there too (users, stages, programs, ...). Over-counting only rebuilds a model that did not need it.
 */
export function tablesFedBy(streams: readonly string[]): Set<string> {
  const byName = new Map(catalog.map((t) => [t.name, t]));
  const fed = new Set<string>(everyRun);
  for (const def of selectStreams(streams)) {
    for (const { table } of mappingOf(def.name).owns) {
      fed.add(table);
      for (const c of byName.get(table)?.columns ?? []) if (c.references) fed.add(c.references.table);
    }
  }
  return fed;
}

export interface ModelsForStreams {
  readonly rebuild: readonly ModelDef[];
  readonly skipped: readonly string[];
}

/**
 * The models (in dependency order) a sync of only `streams` must rebuild: those reading a table the streams feed
 * (found in their SQL, see modelSources), those reading such a model, and those never built (`existing` lacks
 * their table). The others would be rebuilt from unchanged tables: skipped. `fed`: the tables the run changed, when
 * known (a reference anywhere in a record may feed a table the streams do not own); by default what they may feed.
 */
export function modelsForStreams(
  models: readonly ModelDef[],
  streams: readonly string[],
  existing: ReadonlySet<string>,
  fed: ReadonlySet<string> = tablesFedBy(streams),
): ModelsForStreams {
  const known = new Set([...catalog.map((t) => t.name), ...models.map((m) => m.name)]);
  const rebuilt = new Set<string>();
  const rebuild: ModelDef[] = [];
  const skipped: string[] = [];
  for (const m of models) {
    const reads = [...modelSources(m, known), ...m.dependsOn];
    if (!existing.has(m.name) || reads.some((t) => fed.has(t) || rebuilt.has(t))) {
      rebuilt.add(m.name);
      rebuild.push(m);
    } else skipped.push(m.name);
  }
  return { rebuild, skipped };
}
