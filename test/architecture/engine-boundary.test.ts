/**
 * The engine adapter's lint rules (eslint.config.js): outside src/warehouse/duckdb/ and src/warehouse/postgres/, no
 * code imports an engine's library or a dialect's module, and none asks which engine it runs on. Each rule is shown
 * failing on a planted violation, linted as if it were a file of the tree, and the tree itself passes.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { packagePath } from '../../src/util/package-root.ts';

const eslint = new ESLint({ cwd: packagePath() });
const boundaryRules = new Set(['no-restricted-imports', 'no-restricted-syntax']);

/** The boundary rules' findings (other rules, such as unused imports, aside) in `code` linted as `file`. */
async function ruleHits(code: string, file: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: packagePath(file) });
  return (result?.messages ?? []).filter((m) => boundaryRules.has(m.ruleId ?? '')).map((m) => `${m.ruleId}: ${m.line}`);
}

const engineImports = [
  `import { DuckDBInstance } from '@duckdb/node-api';`,
  `import pg from 'pg';`,
  `import { from } from 'pg-copy-streams';`,
  `import { RunLock } from '../warehouse/duckdb/lock.ts';`,
];

const engineChecks = [
  `export const f = (w: { dialect: string }) => w.dialect === 'duckdb';`,
  `export const f = (dialect: string) => 'postgres' !== dialect;`,
  `export function f(w: { dialect: string }): number {\n  switch (w.dialect) {\n    case 'postgres':\n      return 1;\n  }\n  return 0;\n}`,
];

describe('engine adapter lint rules', () => {
  it.each(engineImports)('an engine import outside the dialect folders fails: %s', async (code) => {
    expect(await ruleHits(code, 'src/pipeline/planted.ts')).toEqual(['no-restricted-imports: 1']);
  });

  it('a module of src/warehouse/ may not reach into a dialect folder either', async () => {
    const code = `import { duckdbSql } from './duckdb/sql-dialect.ts';\nexport const d = duckdbSql;`;
    expect(await ruleHits(code, 'src/warehouse/planted.ts')).toEqual(['no-restricted-imports: 1']);
  });

  it.each(engineChecks)('an engine check outside the dialect folders fails: %s', async (code) => {
    const hits = await ruleHits(code, 'src/snapshot/planted.ts');
    expect(hits.length).toBe(1);
    expect(hits[0]).toMatch(/^no-restricted-syntax: \d$/);
  });

  it('the same code is allowed inside a dialect folder', async () => {
    for (const code of [...engineChecks, engineImports[0]!, engineImports[1]!])
      expect(await ruleHits(code, 'src/warehouse/postgres/planted.ts')).toEqual([]);
  });

  it('no file of src/ breaks them', async () => {
    const results = await eslint.lintFiles([packagePath('src')]);
    const hits = results.flatMap((r) =>
      r.messages.filter((m) => boundaryRules.has(m.ruleId ?? '')).map((m) => `${r.filePath}:${m.line} ${m.message}`),
    );
    expect(hits).toEqual([]);
  });
});
