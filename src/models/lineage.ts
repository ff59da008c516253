import type { ModelDef } from './model-files.ts';

/**
 * The tables a model reads, found in its SQL (both dialects' files) rather than kept by hand: every name after FROM
 * or JOIN that is a known table or model and not one of the statement's own CTEs. Comments and string literals are
 * left out first, so a table named only in a comment is not a source.
 */
export function modelSources(model: ModelDef, known: ReadonlySet<string>): string[] {
  return sqlSources([model.sql.duckdb, model.sql.postgres], known, model.name);
}

/** The known tables the statements read (see modelSources), `self` left out. */
export function sqlSources(statements: readonly string[], known: ReadonlySet<string>, self = ''): string[] {
  const found = new Set<string>();
  for (const sql of new Set(statements)) {
    const text = sql
      .replace(/--[^\n]*/g, ' ')
      .replace(/\/\*[\s\S]*?\*\//g, ' ')
      .replace(/'(?:[^']|'')*'/g, "''");
    const ctes = new Set<string>();
    for (const m of text.matchAll(/(?:\bwith(?:\s+recursive)?|,)\s*"?([a-z_][a-z0-9_]*)"?\s+as\s*\(/gi))
      ctes.add((m[1] ?? '').toLowerCase());
    for (const m of text.matchAll(/\b(?:from|join)\s+"?([a-z_][a-z0-9_]*)"?(?!\s*\()/gi)) {
      const name = (m[1] ?? '').toLowerCase();
      if (known.has(name) && !ctes.has(name) && name !== self) found.add(name);
    }
  }
  return [...found].sort();
}

/** Each model's sources, and for each table the models that read it. */
export function lineage(
  models: readonly ModelDef[],
  known: ReadonlySet<string>,
): { reads: Map<string, string[]>; readBy: Map<string, string[]> } {
  const reads = new Map<string, string[]>();
  const readBy = new Map<string, string[]>();
  for (const m of models) {
    const sources = modelSources(m, known);
    reads.set(m.name, sources);
    for (const s of sources) readBy.set(s, [...(readBy.get(s) ?? []), m.name]);
  }
  return { reads, readBy };
}
