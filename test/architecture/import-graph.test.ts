/** The import check itself, on a small tree planted with what it must find. */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImports, findCycles, readImportGraph, type LayerRules } from './import-graph.ts';
import { tempDir } from '../support/temp-dir.ts';

/** low < mid < high, with `side` beside `mid`. */
const order: LayerRules['order'] = [['low'], ['mid', 'side'], ['high']];

/** A clean tree: imports down, within a folder, of packages, by type and by dynamic import. */
const clean: Record<string, string> = {
  'low/base.ts': `export const base = 1;\n`,
  'low/more.ts': `import { base } from './base.ts';\nexport const more = base + 1;\n`,
  'mid/use.ts': `import type { Stats } from 'node:fs';\nimport { more } from '../low/more.ts';\nexport type S = Stats;\nexport const use = more;\n`,
  'side/alone.ts': `export const alone = 2;\n`,
  'high/top.ts': `import { use } from '../mid/use.ts';\nexport const top = async () => use + (await import('../side/alone.ts')).alone;\n`,
};

/** What the check must report: an import up, an import sideways, a 2-file cycle of type-only imports. */
const planted: Record<string, string> = {
  'low/up.ts': `import { top } from '../high/top.ts';\nexport const up = top;\n`,
  'side/across.ts': `export { use } from '../mid/use.ts';\n`,
  'mid/a.ts': `import type { B } from './b.ts';\nexport interface A { b?: B }\n`,
  'mid/b.ts': `import type { A } from './a.ts';\nexport interface B { a?: A }\n`,
};

async function plant(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
  await plant(join(dir.path, 'clean'), clean);
  await plant(join(dir.path, 'planted'), { ...clean, ...planted });
});
afterAll(() => dir?.remove());

describe('the import check', () => {
  it('reads every kind of relative import and leaves packages out', () => {
    const edges = readImportGraph(join(dir.path, 'clean'));
    expect(edges.map((e) => `${e.from} -> ${e.to}`).sort()).toEqual([
      'high/top.ts -> mid/use.ts',
      'high/top.ts -> side/alone.ts',
      'low/more.ts -> low/base.ts',
      'mid/use.ts -> low/more.ts',
    ]);
  });

  it('passes a tree whose imports run down', () => {
    expect(checkImports(readImportGraph(join(dir.path, 'clean')), { order })).toEqual({
      backImports: [],
      cycles: [],
      unplaced: [],
      staleAllowances: [],
    });
  });

  it('reports a planted import up the layers, one sideways and a cycle of two files', () => {
    const problems = checkImports(readImportGraph(join(dir.path, 'planted')), { order });
    expect(problems.backImports).toEqual(['low/up.ts -> high/top.ts', 'side/across.ts -> mid/use.ts']);
    // low/up.ts -> high/top.ts -> mid/use.ts -> low/more.ts: no way back to up.ts, so no cycle there.
    expect(problems.cycles).toEqual(['mid/a.ts <-> mid/b.ts']);
  });

  it('lets an allowance through, and reports one that matches nothing', () => {
    const problems = checkImports(readImportGraph(join(dir.path, 'planted')), {
      order,
      allowedBackImports: ['low/up.ts -> high/top.ts', 'low/base.ts -> high/top.ts'],
      allowedCycles: ['mid/a.ts <-> mid/b.ts'],
    });
    expect(problems.backImports).toEqual(['side/across.ts -> mid/use.ts']);
    expect(problems.cycles).toEqual([]);
    expect(problems.staleAllowances).toEqual(['low/base.ts -> high/top.ts']);
  });

  it('reports a folder the layers do not place', () => {
    expect(checkImports([{ from: 'new/x.ts', to: 'low/base.ts' }], { order }).unplaced).toEqual(['new']);
  });

  it('finds a cycle round three files as one', () => {
    const edges = [
      { from: 'c.ts', to: 'a.ts' },
      { from: 'a.ts', to: 'b.ts' },
      { from: 'b.ts', to: 'c.ts' },
      { from: 'b.ts', to: 'd.ts' },
    ];
    expect(findCycles(edges)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
