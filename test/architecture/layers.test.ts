/**
 * The layers of src/ (docs/architecture.md#layers): every import runs down, never up or sideways, and no files import
 * each other round a cycle, type-only imports included. A failure names each offending import or cycle.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkImports, readImportGraph, type LayerRules } from './import-graph.ts';

const root = join(import.meta.dirname, '..', '..');

/** Lowest first; folders on one line are side by side (see LayerRules). */
export const layers: LayerRules['order'] = [
  ['util'],
  ['source', 'normalize'],
  ['streams'],
  ['config'],
  ['warehouse'],
  ['extract', 'credentials'],
  ['models'],
  ['privacy'],
  ['docs', 'snapshot'],
  ['pipeline'],
  ['report', 'simulator'],
  ['cli'],
];

/**
 * Known exceptions, by name and with why, while work that ends them is under way: `from -> to` and sorted cycles as
 * the check reports them. None today; the check fails on an allowance that matches nothing, so each goes with the
 * commit that ends it.
 */
const allowedBackImports: string[] = [];
const allowedCycles: string[] = [];

describe('the imports of src/', () => {
  const problems = checkImports(readImportGraph(join(root, 'src')), {
    order: layers,
    allowedBackImports,
    allowedCycles,
  });

  it('run down the layers only', () => {
    expect(problems.backImports, 'imports against the layers (docs/architecture.md#layers)').toEqual([]);
  });

  it('form no cycle between files', () => {
    expect(problems.cycles, 'files that import each other, directly or round a loop').toEqual([]);
  });

  it('come from folders the layers place', () => {
    expect(problems.unplaced, 'folders of src/ missing from the layers').toEqual([]);
  });

  it('keep no allowance for an import or cycle that is gone', () => {
    expect(problems.staleAllowances, 'allowances to remove').toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  it('lists the layers this test checks', () => {
    const page = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
    const section = page.slice(page.indexOf('\n## Layers\n'));
    const diagram = /```(?:text)?\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    // The page draws them highest first, one layer a line, side-by-side folders joined with " · ".
    const drawn = diagram
      .trim()
      .split('\n')
      .map((line) => line.trim().split(' · '))
      .reverse();
    expect(drawn).toEqual(layers.map((l) => [...l]));
  });
});
