/**
 * The CLI's one table renderer: rows of cells in aligned columns, numbers right-aligned, fitted to a width (the
 * terminal's, or none when the output is a pipe or a file, so scripts and tests see every character). A column too
 * wide for the width is cut with an ellipsis or folded onto more lines, the widest first. Widths count characters
 * (code points), not display cells: a wide (CJK) character may take two columns of a terminal.
 */

import { escapeControl } from './escape-control.ts';
import { cutToWidth, usableColumns } from './terminal-screen.ts';

/** What a cell may hold; `null` and `undefined` show as `nullText`. */
export type Cell = string | number | bigint | boolean | null | undefined;

export interface TableColumn {
  readonly header: string;
  /** Default: right when every cell given is a number (or numeric text such as `1,204` or `-3.5`), else left. */
  readonly align?: 'left' | 'right';
  /** A cell wider than its column: cut with `…` (default) or folded onto the next lines. */
  readonly overflow?: 'truncate' | 'fold';
  /** At least this wide, so rows rendered one at a time (as each becomes known) line up. */
  readonly width?: number;
  /** The narrowest the fitting may make it (default 8, or the column's own width when narrower). */
  readonly minWidth?: number;
}

export interface TableOptions {
  /** The widest a line may be; undefined: no limit (nothing cut). */
  readonly width?: number | undefined;
  /** Spaces before each line (a table under a section heading). Default 0. */
  readonly indent?: number;
  /** Spaces between columns. Default 2. */
  readonly gap?: number;
  /** Print the header line. Default true. */
  readonly header?: boolean;
  /** How a NULL shows. Default `∅`, which no value of a warehouse column reads as by accident. */
  readonly nullText?: string;
}

const numericText = /^[-+]?[\d,]*\.?\d+(e[-+]?\d+)?%?$/i;
const defaultMinWidth = 8;

/**
 * Columns of a table whose cells carry their unit (`3 rows`, `120 ms`): the first left (a name), the others right so
 * the numbers line up, but `leftFrom` and those after it left (a path, a note).
 */
export function unitColumns(headers: readonly string[], leftFrom?: string): TableColumn[] {
  const from = leftFrom === undefined ? headers.length : headers.indexOf(leftFrom);
  return headers.map((header, i) => ({ header, align: i === 0 || i >= from ? 'left' : 'right' }));
}

/** The table's lines (no trailing newline); a table of no rows is its header alone. */
export function renderTable(
  columns: readonly TableColumn[],
  rows: readonly (readonly Cell[])[],
  options: TableOptions = {},
): string[] {
  const { header, rows: body } = renderTableRows(columns, rows, options);
  return [...header, ...body.flat()];
}

/**
 * The header's lines and each row's lines apart (a folded row takes several), for a caller that prints something
 * under a row, such as the reason a run failed.
 */
export function renderTableRows(
  columns: readonly TableColumn[],
  rows: readonly (readonly Cell[])[],
  options: TableOptions = {},
): { header: string[]; rows: string[][] } {
  const gap = options.gap ?? 2;
  const indent = ' '.repeat(options.indent ?? 0);
  const showHeader = options.header ?? true;
  const nullText = options.nullText ?? '∅';
  const text = rows.map((row) => columns.map((_, i) => cellText(row[i], nullText)));
  const align = columns.map(
    (c, i) =>
      c.align ??
      (rows.some((row) => row[i] != null) && rows.every((row) => row[i] == null || isNumber(row[i]))
        ? 'right'
        : 'left'),
  );
  const natural = columns.map((c, i) =>
    Math.max(showHeader ? length(c.header) : 0, ...text.map((row) => length(row[i]!)), c.width ?? 1),
  );
  const widths = fitWidths(natural, columns, options.width, indent.length + gap * (columns.length - 1));
  const pad = (value: string, i: number): string => {
    const room = widths[i]! - length(value);
    return align[i] === 'right' ? ' '.repeat(room) + value : value + ' '.repeat(room);
  };
  const lines = (cells: readonly string[]): string[] => {
    const parts = cells.map((cell, i) =>
      columns[i]!.overflow === 'fold' ? foldText(cell, widths[i]!) : [cutToWidth(cell, widths[i]!)],
    );
    const height = Math.max(...parts.map((p) => p.length));
    return Array.from({ length: height }, (_, line) =>
      (indent + parts.map((p, i) => pad(p[line] ?? '', i)).join(' '.repeat(gap))).trimEnd(),
    );
  };
  return { header: showHeader ? lines(columns.map((c) => c.header)) : [], rows: text.map(lines) };
}

/**
 * Natural widths narrowed until the line fits `width`: one character at a time from the widest column that may
 * still give one, so short columns (ids, counts) keep their width and long ones (paths, messages) give it up.
 */
function fitWidths(
  natural: readonly number[],
  columns: readonly TableColumn[],
  width: number | undefined,
  fixed: number,
): number[] {
  const widths = [...natural];
  if (width === undefined) return widths;
  const floor = columns.map((c, i) => Math.min(natural[i]!, Math.max(c.minWidth ?? defaultMinWidth, 1)));
  let excess = fixed + widths.reduce((a, b) => a + b, 0) - width;
  while (excess > 0) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++)
      if (widths[i]! > floor[i]! && (widest < 0 || widths[i]! >= widths[widest]!)) widest = i;
    if (widest < 0) break; // every column at its narrowest: the line stays wider than asked
    widths[widest]! -= 1;
    excess -= 1;
  }
  return widths;
}

function isNumber(value: Cell): boolean {
  return (
    typeof value === 'number' || typeof value === 'bigint' || (typeof value === 'string' && numericText.test(value))
  );
}

/** One line of text: line breaks and control characters shown escaped (`\n`, `\x1b`), so no cell moves the cursor. */
function cellText(value: Cell, nullText: string): string {
  if (value === null || value === undefined) return nullText;
  return escapeControl(String(value));
}

function length(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Folded onto lines of at most `width` characters, broken after a space, `/` or `,` where one is near the end. */
export function foldText(text: string, width: number): string[] {
  const out: string[] = [];
  let rest = [...text];
  while (rest.length > width) {
    const head = rest.slice(0, width);
    let cut = width;
    for (let i = width - 1; i >= Math.floor(width / 2); i--)
      if (head[i] === ' ' || head[i] === '/' || head[i] === ',') {
        cut = i + 1;
        break;
      }
    out.push(rest.slice(0, cut).join('').trimEnd());
    rest = rest.slice(cut);
    while (rest[0] === ' ') rest = rest.slice(1);
  }
  out.push(rest.join(''));
  return out;
}

/** Prose (a reason, a hint) folded to `width` under an indent; one line when there is no width. */
export function foldLines(text: string, width: number | undefined, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (width === undefined) return [pad + text];
  return foldText(text, Math.max(width - indent, 20)).map((line) => pad + line);
}

/** The width to fit output to: the terminal's (one column short, so nothing wraps), or none when not a terminal. */
export function outputWidth(
  out: { readonly isTTY?: boolean; readonly columns?: number } = process.stdout,
): number | undefined {
  return out.isTTY ? usableColumns(out) : undefined;
}
