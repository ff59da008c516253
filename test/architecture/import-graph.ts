/**
 * The import graph of a source tree and the two rules it must keep: no import from a lower layer to a higher one,
 * and no cycle between files. Read with TypeScript's own parser, so every import counts: type-only ones, re-exports
 * and dynamic `import()` of a literal path.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** One import of one file: both paths relative to the tree's root, with `/` separators. */
export interface ImportEdge {
  from: string;
  to: string;
}

/** The layers of a tree, each a set of its top folders (`util`, `streams`, ...). */
export interface LayerRules {
  /**
   * Lowest first. A file may import files of its own folder and of any folder in a lower layer; folders that share a
   * layer are side by side and import neither each other nor anything above.
   */
  order: readonly (readonly string[])[];
  /** Imports allowed against the order for now, as `from -> to` (file paths from the root). */
  allowedBackImports?: readonly string[];
  /** Cycles allowed for now, each as its files sorted and joined with ` <-> `. */
  allowedCycles?: readonly string[];
}

export interface ImportProblems {
  /** `from -> to` for every import that runs from a lower layer to a higher one, or sideways within a layer. */
  backImports: string[];
  /** Every file-level cycle, as its files sorted and joined with ` <-> `. */
  cycles: string[];
  /** Top folders the order does not name (a new folder has to be placed in it). */
  unplaced: string[];
  /** Allowances that match nothing any more: they are to be removed with the import they allowed. */
  staleAllowances: string[];
}

const sourceExtensions = ['.ts', '.js'];

function listSources(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (sourceExtensions.includes(path.extname(entry.name)) && !entry.name.endsWith('.d.ts')) files.push(full);
    }
  };
  walk(root);
  return files.sort();
}

function posix(relative: string): string {
  return relative.split(path.sep).join('/');
}

/** Every relative import of every source file under `root` (packages are outside the graph). */
export function readImportGraph(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of listSources(root)) {
    const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), fileName);
      edges.push({ from: posix(path.relative(root, file)), to: posix(path.relative(root, target)) });
    }
  }
  return edges;
}

function layerIndex(order: LayerRules['order']): Map<string, number> {
  const index = new Map<string, number>();
  order.forEach((folders, rank) => folders.forEach((folder) => index.set(folder, rank)));
  return index;
}

function topFolder(file: string): string {
  return file.split('/')[0] ?? file;
}

/** Strongly connected components of more than one file (Tarjan's algorithm), each sorted. */
export function findCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (from === to) continue;
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    order.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!order.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, order.get(target)!));
      }
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!order.has(node)) visit(node);
  return components.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** What in `edges` breaks `rules`. */
export function checkImports(edges: readonly ImportEdge[], rules: LayerRules): ImportProblems {
  const rank = layerIndex(rules.order);
  const allowedBack = new Set(rules.allowedBackImports ?? []);
  const allowedCycles = new Set(rules.allowedCycles ?? []);
  const usedAllowances = new Set<string>();
  const backImports: string[] = [];
  const unplaced = new Set<string>();
  for (const { from, to } of edges) {
    const fromRank = rank.get(topFolder(from));
    const toRank = rank.get(topFolder(to));
    if (fromRank === undefined) unplaced.add(topFolder(from));
    if (toRank === undefined) unplaced.add(topFolder(to));
    if (fromRank === undefined || toRank === undefined) continue;
    if (toRank < fromRank || topFolder(from) === topFolder(to)) continue;
    const edge = `${from} -> ${to}`;
    if (allowedBack.has(edge)) usedAllowances.add(edge);
    else backImports.push(edge);
  }
  const cycles: string[] = [];
  for (const component of findCycles(edges)) {
    const cycle = component.join(' <-> ');
    if (allowedCycles.has(cycle)) usedAllowances.add(cycle);
    else cycles.push(cycle);
  }
  const staleAllowances = [...allowedBack, ...allowedCycles].filter((allowance) => !usedAllowances.has(allowance));
  return { backImports, cycles, unplaced: [...unplaced].sort(), staleAllowances };
}
