/**
 * The code blocks of README.md and docs/*.md that a user would copy: shell commands, pipeline files and SQL. A block
 * that cannot run carries a visible line right above it, `_Not run by the tests: <reason>._`, with one of a few
 * fixed reasons; a JSON or SQL block that is a file of the user's is named by the line above it, ending in
 * `` `name.json`: `` (or `.sql`), and written there before the page's commands run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Why a block may stay out of the tests; anything else in a marker is refused, so none is opted out lightly. */
export const optOutReasons = [
  'needs a real site',
  'needs a database server of your own',
  'shows data the site sends',
  'needs Python, Spark or Athena',
] as const;
export type OptOutReason = (typeof optOutReasons)[number];

export type BlockKind = 'shell' | 'json' | 'sql';

const kindOf: Readonly<Record<string, BlockKind>> = {
  sh: 'shell',
  bash: 'shell',
  console: 'shell',
  json: 'json',
  sql: 'sql',
};

/** Generated from the code (docs dictionary, docs settings): their blocks are the generator's, not examples. */
const generatedPages = new Set(['docs/data-dictionary.md', 'docs/settings.md']);

export interface DocBlock {
  /** The page, relative to the repository root. */
  readonly page: string;
  /** Line of the opening fence, 1-based. */
  readonly line: number;
  /** The fence's info string's first word ('' when none). */
  readonly lang: string;
  /** What the tests do with it; undefined for other languages (ts, text), which they leave alone. */
  readonly kind: BlockKind | undefined;
  readonly text: string;
  /** The file the line above names (`` `portfolio.json`: ``). */
  readonly fileName?: string;
  /** The marker's reason, as written (checked against optOutReasons by the test). */
  readonly optOut?: string;
  /** The nearest line of prose above (marker and file name aside): it may name the engine an SQL block is for. */
  readonly lead: string;
}

/** README.md, then docs/*.md in name order, the generated pages left out. */
export function docPages(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
    .filter((page) => !generatedPages.has(page));
  return ['README.md', ...docs];
}

export function readBlocks(root: string, page: string): DocBlock[] {
  return parseBlocks(page, readFileSync(join(root, page), 'utf8'));
}

const optOutLine = /^_Not run by the tests: (.+?)\._$/;
const fileNameLine = /`([\w./-]+\.(?:json|sql))`:$/;

/** Every fenced block of a Markdown text, with the marker or file name on the non-blank lines right above it. */
export function parseBlocks(page: string, markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const indent = /^\s*/.exec(lines[i]!)![0].length;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence)) end++;
    const above = linesAbove(lines, i);
    const lead = lines
      .slice(0, i)
      .reverse()
      .map((l) => l.trim())
      .find((l) => l !== '' && !above.includes(l));
    const optOut = above.map((l) => optOutLine.exec(l)?.[1]).find((r) => r !== undefined);
    const fileName = above.map((l) => fileNameLine.exec(l)?.[1]).find((n) => n !== undefined);
    const lang = open[2]!.toLowerCase();
    blocks.push({
      page,
      line: i + 1,
      lang,
      kind: kindOf[lang],
      lead: lead ?? '',
      text: lines
        .slice(i + 1, end)
        .map((l) => l.slice(Math.min(indent, /^\s*/.exec(l)![0].length)))
        .join('\n'),
      ...(fileName === undefined ? {} : { fileName }),
      ...(optOut === undefined ? {} : { optOut }),
    });
    i = end;
  }
  return blocks;
}

/** The (at most two) non-blank lines right above line `i`: a marker and a file name may both be there. */
function linesAbove(lines: readonly string[], i: number): string[] {
  const out: string[] = [];
  for (let j = i - 1; j >= 0 && out.length < 2; j--) {
    const line = lines[j]!.trim();
    if (line === '') continue;
    if (!optOutLine.test(line) && !fileNameLine.test(line)) {
      // A paragraph ending in a file name counts; any other line ends the search.
      break;
    }
    out.push(line);
  }
  return out;
}

export interface ShellCommand {
  /** Line of the page the command starts on. */
  readonly line: number;
  /** The command as a reader sees it: continuations joined, a trailing `# comment` dropped. */
  readonly text: string;
  /** The trailing comment, which may say what exit code to expect (`# exit 2`). */
  readonly comment: string;
}

/** The commands of a shell block: `\` continuations joined, `$ ` prompts dropped (console), output lines skipped. */
export function shellCommands(block: DocBlock): ShellCommand[] {
  const out: ShellCommand[] = [];
  const lines = block.text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    if (block.lang === 'console') {
      if (!line.startsWith('$ ')) continue;
      line = line.slice(2);
    }
    const start = i;
    while (line.trimEnd().endsWith('\\') && i + 1 < lines.length) {
      line = `${line.trimEnd().slice(0, -1)} ${lines[++i]!.trim()}`;
    }
    const { code, comment } = splitComment(line);
    if (code.trim() !== '') out.push({ line: block.line + 1 + start, text: code.trim().replace(/\s+/g, ' '), comment });
  }
  return out;
}

/** A line's code and its `#` comment: a `#` outside quotes that starts a word. */
function splitComment(line: string): { code: string; comment: string } {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!)))
      return { code: line.slice(0, i), comment: line.slice(i + 1).trim() };
  }
  return { code: line, comment: '' };
}

/** A command's words, as a POSIX shell splits them: single and double quotes, backslash escapes, no expansion. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  // A word in progress ('' for an empty quoted one), null between words.
  let word: string | null = null;
  let quote: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote === "'" && c !== "'") word = `${word ?? ''}${c}`;
    else if (quote === '"' && c === '\\' && /["\\$`]/.test(command[i + 1] ?? ''))
      word = `${word ?? ''}${command[++i]!}`;
    else if (quote !== null && c !== quote) word = `${word ?? ''}${c}`;
    else if (quote !== null) quote = null;
    else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < command.length) word = `${word ?? ''}${command[++i]!}`;
    else word = `${word ?? ''}${c}`;
  }
  if (quote) throw new Error(`unclosed ${quote} in: ${command}`);
  if (word !== null) words.push(word);
  return words;
}

/** The statements of an SQL block, split at a `;` ending a line (outside quotes and comments). */
export function sqlStatements(text: string): string[] {
  const statements: string[] = [];
  let current = '';
  let quote = false;
  for (const line of text.split('\n')) {
    let code = '';
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (c === "'") quote = !quote;
      if (!quote && c === '-' && line[i + 1] === '-') break;
      code += c;
    }
    current += `${code}\n`;
    if (!quote && code.trimEnd().endsWith(';')) {
      statements.push(current.trim().replace(/;$/, ''));
      current = '';
    }
  }
  if (current.trim() !== '') statements.push(current.trim());
  return statements;
}

/**
 * The engines an SQL block is for: the one its first comment line (`-- PostgreSQL ...`), else the line of prose
 * above it (`With DuckDB ...:`), names alone; both otherwise.
 */
export function sqlEngines(block: DocBlock): ('duckdb' | 'postgres')[] {
  const comment = /^\s*--(.*)$/.exec(block.text.split('\n')[0] ?? '')?.[1];
  for (const text of [comment, block.lead]) {
    if (text === undefined) continue;
    const duckdb = /duckdb/i.test(text);
    const postgres = /postgres/i.test(text);
    if (duckdb !== postgres) return duckdb ? ['duckdb'] : ['postgres'];
    if (duckdb) break;
  }
  return ['duckdb', 'postgres'];
}
