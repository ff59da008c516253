/**
 * Names that say their unit (issue 41), checked on every declared table and model: money sent as text, which a reader
 * could take for a count, is named `*_as_sent` and no number anywhere has its name; every ratio is a number named
 * `*_rate` or `*_share`.
 */
import { describe, expect, it } from 'vitest';
import { loadModels, modelTableDefs } from '../../src/models/index.ts';
import { isRatio } from '../../src/models/generic-tests.ts';
import type { ColumnDef } from '../../src/normalize/table-def.ts';
import { readerOf, sourceOf } from '../../src/streams/column-readers.ts';
import { tables } from '../../src/streams/registry.ts';

const all = [...tables, ...modelTableDefs(loadModels())];
const numeric = new Set(['bigint', 'integer', 'double', 'decimal']);
const columns = all.flatMap((t) => t.columns.map((c) => ({ table: t.name, c })));

/** Text columns read from the same field as a money column of their table: the amount as the site wrote it. */
const textMoney = tables.flatMap((t) => {
  const moneySources = new Set(t.columns.filter((c) => readerOf(c) === 'money').map(sourceOf));
  return t.columns
    .filter((c: ColumnDef) => c.type === 'text' && moneySources.has(sourceOf(c)))
    .map((c) => `${t.name}.${c.name}`);
});

describe('column names and units', () => {
  it('names money sent as text *_as_sent, a name no number has', () => {
    expect(textMoney.length).toBeGreaterThan(0);
    for (const qualified of textMoney) {
      const name = qualified.split('.')[1]!;
      expect(name, qualified).toMatch(/_as_sent$/);
      const numbers = columns.filter((x) => x.c.name === name && numeric.has(x.c.type));
      expect(numbers.map((x) => `${x.table}.${x.c.name}`)).toEqual([]);
    }
  });

  it('declares every *_rate and *_share column as a number, described as a fraction', () => {
    const ratios = columns.filter((x) => isRatio(x.c.name));
    expect(ratios.length).toBeGreaterThan(5);
    for (const { table, c } of ratios) {
      expect(numeric.has(c.type), `${table}.${c.name}`).toBe(true);
      expect(c.type === 'decimal' || c.type === 'double', `${table}.${c.name}`).toBe(true);
    }
  });

  it('has no column in percent left', () => {
    const percent = columns.filter((x) => /percent/i.test(x.c.name));
    expect(percent.map((x) => `${x.table}.${x.c.name}`)).toEqual([]);
  });
});
