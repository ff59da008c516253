import { describe, expect, it } from 'vitest';

import {
  planPromotions,
  promotedCatalog,
  promotedValue,
  type PromotionSetting,
} from '../../src/normalize/promotions.ts';

import { ConfigError } from '../../src/util/errors.ts';
import { streamMappings, tables } from '../../src/streams/registry.ts';

const plan = (s: PromotionSetting[]) => planPromotions(s, streamMappings, tables);

describe('promote setting', () => {
  it('places each column in its stream entity table, a reference as <name>_id', () => {
    const p = plan([
      { stream: 'application_tasks', path: 'extra.n', column: 'n', type: 'number' },
      { stream: 'awards', path: 'extra.owner', column: 'owner', type: 'reference' },
    ]);
    expect(p.map((x) => [x.table, x.column, x.references])).toEqual([
      ['application_tasks', 'n', undefined],
      ['awards', 'owner_id', 'users'],
    ]);
    const catalog = promotedCatalog(tables, p);
    const awards = catalog.find((t) => t.name === 'awards')!;
    expect(awards.columns.at(-1)).toMatchObject({ name: 'owner_id', type: 'bigint', references: { table: 'users' } });
    expect(tables.find((t) => t.name === 'awards')!.columns.some((c) => c.name === 'owner_id')).toBe(false);
  });

  it.each([
    [{ stream: 'nope', path: 'a', column: 'a', type: 'text' }, /not a stream/],
    [{ stream: 'applications', path: 'a[].b', column: 'a', type: 'text' }, /dotted member names/],
    [{ stream: 'applications', path: 'a', column: 'Bad Name', type: 'text' }, /lower-case SQL name/],
    [{ stream: 'applications', path: 'a', column: 'title', type: 'text' }, /already has a column title/],
    [{ stream: 'applications', path: 'a', column: 'x', type: 'reference', references: 'nope' }, /not a table/],
  ] as [PromotionSetting, RegExp][])('refuses %j with one clear line', (setting, message) => {
    expect(() => plan([setting])).toThrow(ConfigError);
    expect(() => plan([setting])).toThrow(message);
  });

  it('reads values as the SQL backfill does: another shape is NULL', () => {
    const [integer, number, text, json, bool, ref] = plan(
      (['integer', 'number', 'text', 'json', 'boolean', 'reference'] as const).map((type) => ({
        stream: 'applications',
        path: 'extra.v',
        column: `c_${type}`,
        type,
      })),
    );
    const at = (v: unknown) => ({ id: 1, extra: { v } }) as never;
    expect(promotedValue(at(42), integer!)).toBe(42);
    expect(promotedValue(at('42'), integer!)).toBe(42);
    expect(promotedValue(at(4.5), integer!)).toBeNull();
    expect(promotedValue(at('1234567890123456'), integer!)).toBeNull();
    expect(promotedValue(at(4.5), number!)).toBe(4.5);
    expect(promotedValue(at('4.5'), number!)).toBeNull();
    expect(promotedValue(at({ a: 1 }), text!)).toBe('{"a":1}');
    expect(promotedValue(at('x'), text!)).toBe('x');
    expect(promotedValue(at([1, 2]), json!)).toBe('[1,2]');
    expect(promotedValue(at(null), json!)).toBeNull();
    expect(promotedValue(at(true), bool!)).toBe(true);
    expect(promotedValue(at({ id: 7, email: 'e' }), ref!)).toBe(7);
    expect(promotedValue({ id: 1, extra: 'flat' } as never, text!)).toBeNull();
  });
});
