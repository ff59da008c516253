import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Row } from '../../src/normalize/table-def.ts';
import type { Warehouse } from '../../src/warehouse/index.ts';
import { catalog, harness, thing, type Harness } from '../support/warehouse-fixtures.ts';

const hostile = [
  `it's "quoted"`,
  'back\\slash \\N \\\\ end\\',
  'tab\there\nnew line\r\ncrlf',
  "'); DROP TABLE things; --",
  '\\N',
  'emoji 🎉 👩‍👩‍👧 ünïcödé',
  'x'.repeat(100 * 1024),
  '',
  ' ',
];

function hostileRows(): Row[] {
  return hostile.map((s, i) =>
    thing(i + 1, {
      name: s,
      payload: JSON.stringify({ s, nested: [s] }),
      _raw: `{"k":  ${JSON.stringify(s)} ,"n":1}`,
    }),
  );
}

/** Extremes of the numeric and time formats. */
const edgeRows: Row[] = [
  thing(100, {
    id: 9007199254740993n,
    amount: '-0.01',
    score: -1.5e300,
    count: -2147483648,
    happened_at: '1970-01-01T00:00:00.000000Z',
    owner_id: null,
  }),
  thing(101, {
    amount: '9999999999999999.99',
    score: 0,
    count: 0,
    flag: false,
    happened_at: '1969-12-31T23:59:59.999999Z',
    payload: 'null',
  }),
  thing(102, { amount: null, score: null, count: null, flag: null, happened_at: null, payload: null, name: null }),
];

describe('values are identical in both dialects and hostile text round-trips byte for byte', () => {
  const hs: Harness[] = [];
  const whs: Warehouse[] = [];

  beforeAll(async () => {
    for (const dialect of ['duckdb', 'postgres'] as const) {
      const h = await harness(dialect, 'values');
      const wh = await h.open();
      await wh.migrate(catalog);
      const unit = await wh.openLoad();
      await unit.append('things', [...hostileRows(), ...edgeRows]);
      await unit.commit({ runId: 'r', extractedAt: '2024-05-01T12:00:00.123456Z' });
      hs.push(h);
      whs.push(wh);
    }
  });
  afterAll(async () => {
    for (const wh of whs) await wh.close();
    for (const h of hs) await h.cleanup();
  });

  it.each([0, 1])('hostile strings round-trip (%s)', async (i) => {
    const wh = whs[i]!;
    const rows = await wh.query('SELECT id, name, payload, _raw FROM things WHERE id <= $1 ORDER BY id', [
      hostile.length,
    ]);
    expect(rows.map((r) => r.name)).toEqual(hostile);
    expect(rows.map((r) => r.payload)).toEqual(hostile.map((s) => JSON.stringify({ s, nested: [s] })));
    expect(rows.map((r) => r._raw)).toEqual(hostile.map((s) => `{"k":  ${JSON.stringify(s)} ,"n":1}`));
    expect(await wh.query('SELECT name FROM things WHERE name = $1', ['\\N'])).toEqual([{ name: '\\N' }]);
  });

  it('query returns identical cells from DuckDB and Postgres', async () => {
    const sql = `SELECT *, count(*) OVER () AS n, sum(id) OVER () AS total
                   FROM things ORDER BY id`;
    const [duck, post] = await Promise.all(whs.map((wh) => wh.query(sql)));
    expect(duck).toHaveLength(hostile.length + edgeRows.length);
    expect(post).toEqual(duck);
    const big = duck!.find((r) => r.id === '9007199254740993');
    expect(big).toMatchObject({ amount: '-0.01', count: -2147483648, happened_at: '1970-01-01T00:00:00.000000Z' });
    expect(duck!.find((r) => r.id === 101)).toMatchObject({
      amount: '9999999999999999.99',
      happened_at: '1969-12-31T23:59:59.999999Z',
      payload: 'null',
    });
    expect(duck!.find((r) => r.id === 102)).toMatchObject({
      amount: null,
      flag: null,
      payload: null,
      _extracted_at: '2024-05-01T12:00:00.123456Z',
    });
  });

  it('aggregates agree too', async () => {
    const sql = `SELECT count(*) AS n, sum(amount) AS amount, sum(count) AS c, max(happened_at) AS latest, bool_or(flag) AS any_flag FROM things`;
    const [duck, post] = await Promise.all(whs.map((wh) => wh.query(sql)));
    expect(post).toEqual(duck);
  });
});
