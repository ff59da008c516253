/**
 * Every document points only at files the repository holds. Checked in each Markdown file of the repository
 * (outside fenced code blocks):
 * - relative links `[text](path)`, resolved from the document's folder, and their `#anchor` when they point into a
 *   Markdown file (GitHub's heading slugs);
 * - backticked repository paths (`src/...`, `docs/...`, ...), resolved from the repository root. Only a span that is
 *   a path and nothing else counts: one holding a glob (`models/*.sql`), a placeholder (`<table>`), a space or an
 *   option is an example, not a reference, and a trailing `:line` is dropped.
 * And in the sources, where messages send a user to read more: each `docs/<page>.md` or `README.md` named exists, and
 * so does the section a pointer names after it (`docs/postgres.md, "Privileges"`).
 * Plain file reads only: no Postgres, no child process.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');

/** What .gitignore keeps out of the repository (data/ holds only its README there), and build or tool output. */
const skippedDirs = new Set(['node_modules', '.git', 'dist', 'coverage', '.vitest']);

/** The files under `dir` whose names end in `ending`, relative to the repository root. */
function filesUnder(dir: string, ending: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(root, path);
    if (entry.isDirectory()) {
      if (!skippedDirs.has(entry.name) && rel !== 'data') found.push(...filesUnder(path, ending));
    } else if (entry.name.endsWith(ending)) found.push(rel);
  }
  return found;
}
const documents = [...filesUnder(root, '.md'), 'data/README.md'].sort();

/** The document's lines outside fenced code blocks (a fence's lines become empty, so line numbers hold). */
function prose(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return '';
    }
    return fence === null ? line : '';
  });
}

/** The text of each heading of a Markdown file, in order. */
function headings(file: string): string[] {
  return prose(readFileSync(join(root, file), 'utf8')).flatMap(
    (line) => /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1] ?? [],
  );
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, ... */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const heading of headings(file)) {
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

const repoPath = /^(?:src|docs|examples|bench|models|pipelines|sql|test|bin)\/[\w./-]*$/;

/** Each reference in `file` that names no file or heading of the repository, as `file:line: reference`. */
function brokenReferences(file: string, text = readFileSync(join(root, file), 'utf8')): string[] {
  const broken: string[] = [];
  prose(text).forEach((line, i) => {
    const where = `${file}:${i + 1}`;
    const code = [...line.matchAll(/(`+)(.+?)\1/g)].map((m) => m[2]!.trim());
    const outsideCode = line.replace(/(`+).+?\1/g, '');
    for (const m of outsideCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? join(root, file) : join(root, path.startsWith('/') ? '' : dirname(file), path);
      if (!existsSync(resolved)) broken.push(`${where}: link ${target}`);
      else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(relative(root, resolved)).has(anchor))
        broken.push(`${where}: link ${target} (no such heading)`);
    }
    for (const span of code) {
      const path = span.replace(/:\d+$/, '');
      if (repoPath.test(path) && !existsSync(join(root, path))) broken.push(`${where}: path \`${span}\``);
    }
  });
  return broken;
}

/** Each document (and `, "Section"` after it) that `file`'s text names but the repository lacks, as `file:line: ...`. */
function brokenPointers(file: string, text = readFileSync(join(root, file), 'utf8')): string[] {
  const broken: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/\b(README\.md|docs\/[\w-]+\.md)(?:, "([^"]+)")?/g)) {
      const [, doc = '', section] = m;
      if (!existsSync(join(root, doc))) broken.push(`${file}:${i + 1}: ${doc}`);
      else if (section !== undefined && !headings(doc).some((h) => h.toLowerCase() === section.toLowerCase()))
        broken.push(`${file}:${i + 1}: ${doc}, "${section}" (no such heading)`);
    }
  });
  return broken;
}

describe('documentation references', () => {
  it('finds the documents it is meant to check', () => {
    for (const file of ['README.md', 'BENCHMARKS.md', 'docs/architecture.md', 'examples/cron.md', 'sql/README.md'])
      expect(documents).toContain(file);
  });

  it('every relative link and backticked repository path in a document names a file of the repository', () => {
    expect(documents.flatMap((file) => brokenReferences(file))).toEqual([]);
  });

  it('every document a message in src/ points to exists, with the section it names', () => {
    const files = filesUnder(join(root, 'src'), '.ts');
    expect(files).toContain('src/util/doc-pointers.ts');
    expect(files.flatMap((file) => brokenPointers(file))).toEqual([]);
  });

  it('README.md is a front door: at most 150 lines, linking every page of docs/', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(150);
    const pages = documents.filter((f) => f.startsWith('docs/') && !f.slice(5).includes('/'));
    expect(pages.length).toBeGreaterThan(0);
    const missing = pages.filter((page) => !readme.includes(`](${page})`) && !readme.includes(`](./${page})`));
    expect(missing).toEqual([]);
  });

  it("README.md's command table has a row for each command of src/cli/commands/", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const commands = readdirSync(join(root, 'src/cli/commands'))
      .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
      .map((f) => f.slice(0, -3));
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.filter((name) => !new RegExp(`^\\| \`grantflow ${name}[\` ]`, 'm').test(readme))).toEqual([]);
  });

  it('the checks catch what they are for', () => {
    const broken = (text: string): string[] => brokenReferences('docs/probe.md', text);
    expect(broken('see `src/no-such-module.ts`')).toEqual(['docs/probe.md:1: path `src/no-such-module.ts`']);
    expect(broken('see [the page](missing.md)')).toEqual(['docs/probe.md:1: link missing.md']);
    expect(broken('see [the page](architecture.md#no-such-heading)')).toEqual([
      'docs/probe.md:1: link architecture.md#no-such-heading (no such heading)',
    ]);
    expect(broken('[the page](architecture.md#stages), [the top](../README.md), `src/cli/main.ts:12`')).toEqual([]);
    expect(broken('a glob `models/*.sql`, a placeholder `data/raw/<run-id>/`, an option `--schema x`')).toEqual([]);
    expect(broken('```sh\nnpx grantflow sync --pipeline pipelines/yours.json\n```\n`src/gone.ts`')).toEqual([
      'docs/probe.md:4: path `src/gone.ts`',
    ]);
    expect(broken('[site](https://example.com/x) and `[not a link](nowhere.md)`')).toEqual([]);
    const pointers = (text: string): string[] => brokenPointers('src/probe.ts', text);
    expect(pointers(`'README.md, "Postgres privileges", lists them'`)).toEqual([
      'src/probe.ts:1: README.md, "Postgres privileges" (no such heading)',
    ]);
    expect(pointers(`// see docs/no-such-page.md`)).toEqual(['src/probe.ts:1: docs/no-such-page.md']);
    expect(pointers(`'docs/postgres.md, "Privileges"' and docs/report.md`)).toEqual([]);
  });
});
