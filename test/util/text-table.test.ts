/** The CLI's table renderer: alignment, NULLs, and fitting a width by cutting or folding the widest columns. */
import { describe, expect, it } from 'vitest';
import { foldLines, outputWidth, renderTable } from '../../src/util/text-table.ts';

const columns = [{ header: 'name' }, { header: 'rows' }, { header: 'path' }] as const;
const rows = [
  ['applications', 1204, '/var/lib/grantflow/data/snapshots/applications/2024-05-01T00-00-00Z.parquet'],
  ['funds', null, '/tmp/f.parquet'],
];

describe('renderTable', () => {
  it('aligns columns, numbers to the right, and shows NULL distinctly', () => {
    const lines = renderTable(columns, rows);
    expect(lines[0]).toMatch(/^name {10}rows {2}path$/);
    expect(lines[1]).toMatch(/^applications {2}1204 {2}\/var\/lib\/.*\.parquet$/);
    expect(lines[2]).toMatch(/^funds {12}∅ {2}\/tmp\/f\.parquet$/);
    // Every column starts at the same offset on every line.
    const starts = lines.map((l) => l.indexOf('/'));
    expect(starts[1]).toBe(starts[2]);
    expect(lines[0]!.indexOf('path')).toBe(starts[1]);
  });

  it('right-aligns a column of numbers given as text, and leaves text left', () => {
    const lines = renderTable(
      [{ header: 'n' }, { header: 'word' }],
      [
        ['1,204', 'a'],
        ['7', 'bb'],
      ],
    );
    expect(lines.slice(1)).toEqual(['1,204  a', '    7  bb']);
  });

  it('fits a width by cutting the widest column with an ellipsis, keeping the short ones whole', () => {
    for (const width of [80, 60, 40]) {
      const lines = renderTable(columns, rows, { width });
      for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(width);
      expect(lines[1]).toMatch(/^applications {2}1204 {2}\/var\/lib\/.*…$/);
    }
  });

  it('folds a column onto more lines instead when asked, losing nothing', () => {
    const path = rows[0]![2] as string;
    const lines = renderTable([columns[0], columns[1], { header: 'path', overflow: 'fold' }], rows, { width: 50 });
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(50);
    const offset = lines[0]!.indexOf('path');
    const folded = lines.slice(1, -1).map((l) => l.slice(offset));
    expect(folded.length).toBeGreaterThan(1);
    expect(folded.join('')).toBe(path);
  });

  it('keeps every character when no width is given (a pipe, a file)', () => {
    expect(renderTable(columns, rows).join('\n')).toContain(rows[0]![2]);
  });

  it('keeps a cell on one line: line breaks and control characters are shown, not sent', () => {
    const [, line] = renderTable([{ header: 'v' }], [['a\nb\u001b[2Jc']]);
    expect(line).toBe('a\\nb\\x1b[2Jc');
  });

  it('indents under a heading and may leave the header out', () => {
    expect(renderTable([{ header: 'a' }, { header: 'b' }], [['x', 'y']], { indent: 2, header: false })).toEqual([
      '  x  y',
    ]);
  });
});

describe('foldLines and outputWidth', () => {
  it('folds prose under an indent, one line without a width', () => {
    const text = 'the run was stopped by a signal before the applications stream committed its last page';
    expect(foldLines(text, undefined, 4)).toEqual([`    ${text}`]);
    const folded = foldLines(text, 40, 4);
    for (const line of folded) expect(line.length).toBeLessThanOrEqual(40);
    expect(folded.map((l) => l.trim()).join(' ')).toBe(text);
  });

  it("is the terminal's width less one, and none when the output is not a terminal", () => {
    expect(outputWidth({ isTTY: true, columns: 80 })).toBe(79);
    expect(outputWidth({ isTTY: false, columns: 80 })).toBeUndefined();
  });
});
