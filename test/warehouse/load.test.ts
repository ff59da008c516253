import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/index.ts';
import { mergeChunkRows } from '../../src/warehouse/load-unit.ts';
import {
  bothDialects,
  catalog,
  harness,
  migrationFiles,
  snapshot,
  thing,
  type Harness,
} from '../support/warehouse-fixtures.ts';

const plan = (runId: string, extractedAt = '2024-05-01T00:00:00.000000Z') => ({ runId, extractedAt });

describe.each(bothDialects)('warehouse loading (%s)', (dialect) => {
  let h: Harness;
  let wh: Warehouse;

  beforeAll(async () => {
    h = await harness(dialect, 'load');
    wh = await h.open();
    await wh.migrate(catalog);
  });
  afterAll(async () => {
    await wh.close();
    await h.cleanup();
  });

  it('migrate is idempotent and records the catalog fingerprint', async () => {
    await wh.migrate(catalog);
    await wh.migrate(catalog);
    const fp = await wh.query('SELECT count(*) AS n FROM _grantflow_catalog');
    expect(fp).toEqual([{ n: 1 }]);
    const names = (await wh.query('SELECT name FROM _grantflow_migrations ORDER BY name')).map((r) => String(r.name));
    // Each SQL file once; migrations written in TypeScript (they look at what an older version made) among them.
    expect(names).toEqual(expect.arrayContaining(migrationFiles.map((f) => f.replace(/\.sql$/, ''))));
    expect(new Set(names).size).toBe(names.length);
    // Nothing is left to run.
    expect(await wh.needsMigration(catalog)).toBe(false);
  });

  it('migrate adds a new column to an existing table and a new table', async () => {
    const evolved = catalog.map((t) =>
      t.name === 'notes'
        ? { ...t, columns: [...t.columns, { name: 'extra', type: 'text' as const, description: 'new' }] }
        : t,
    );
    evolved.push({
      name: 'later',
      description: 'new',
      kind: 'entity',
      primaryKey: ['id'],
      columns: [{ name: 'id', type: 'bigint', description: 'id' }],
    });
    await wh.migrate(evolved);
    await wh.migrate(evolved);
    expect(await wh.query('SELECT extra FROM notes')).toEqual([]);
    expect(await wh.query('SELECT _raw, _ref_only FROM later')).toEqual([]);
    expect(await wh.query('SELECT count(*) AS n FROM _grantflow_catalog')).toEqual([{ n: 2 }]);
    await wh.migrate(catalog); // the catalog given last is the one loads use
  });

  it('merges a unit larger than one merge slice: the last staged row of a key still wins', async () => {
    const n = mergeChunkRows + 2_500;
    const unit = await wh.openLoad();
    await unit.append(
      'slices',
      Array.from({ length: n }, (_, i) => thing(i + 1)),
    );
    // Key 7 first sits in the first slice; again in the last slice, twice, the later of which must win.
    await unit.append('slices', [thing(7, { name: 'second' }), thing(7, { name: 'third' })]);
    await unit.commit(plan('slices'));
    expect(await wh.query('SELECT count(*) AS n, count(DISTINCT id) AS k FROM slices')).toEqual([{ n, k: n }]);
    expect(await wh.query('SELECT name FROM slices WHERE id = 7')).toEqual([{ name: 'third' }]);
    expect(await wh.query(`SELECT name FROM slices WHERE id = ${n}`)).toEqual([{ name: `thing ${n}` }]);
  });

  it('merges by key, last staged row wins, and a replay changes nothing', async () => {
    const rows = Array.from({ length: 1200 }, (_, i) => thing(i + 1));
    const load = async (): Promise<void> => {
      const unit = await wh.openLoad();
      await unit.append('things', rows.slice(0, 700));
      await unit.append('things', rows.slice(700));
      await unit.append('things', [thing(5, { name: 'last wins' })]);
      const info = await unit.commit({ ...plan('r1'), state: { stream: 'things', value: { cursor: 'abc', n: 1 } } });
      expect(info.merged.things).toBe(1200);
    };
    await load();
    const before = await snapshot(wh, 'things');
    const checksum = await wh.query('SELECT count(*) AS n, sum(id) AS s, min(name) AS lo FROM things');
    await load();
    expect(await snapshot(wh, 'things')).toBe(before);
    expect(await wh.query('SELECT count(*) AS n, sum(id) AS s, min(name) AS lo FROM things')).toEqual(checksum);
    expect(await wh.query('SELECT name FROM things WHERE id = 5')).toEqual([{ name: 'last wins' }]);
    expect(await wh.readState('things')).toEqual({ cursor: 'abc', n: 1 });
    const [row] = await wh.query('SELECT * FROM things WHERE id = 2');
    expect(row).toEqual({
      id: 2,
      name: 'thing 2',
      amount: '2.50',
      score: 0.5,
      count: 4,
      flag: true,
      happened_at: '2024-01-02T03:04:05.000002Z',
      payload: '{"id": 2,  "x": [1, 2]}',
      owner_id: 2,
      _raw: '{"id":2}',
      _extracted_at: '2024-05-01T00:00:00.000000Z',
      _run_id: 'r1',
      _deleted_at: null,
      _ref_only: false,
    });
  });

  it('coalesce never overwrites with NULL, never changes a row its own stream wrote, _ref_only stays false', async () => {
    let unit = await wh.openLoad();
    await unit.append('people', [{ id: 1, name: 'Ann', email: null, _raw: '{"ref":1}' }], 'coalesce');
    await unit.commit(plan('r2'));
    expect(await wh.query('SELECT name, email, _raw, _ref_only FROM people WHERE id = 1')).toEqual([
      { name: 'Ann', email: null, _raw: '{"ref":1}', _ref_only: true },
    ]);
    unit = await wh.openLoad();
    await unit.append('people', [{ id: 1, name: 'Ann Full', email: 'a@x.org', _raw: '{"full":1}' }], 'replace');
    await unit.append('people', [{ id: 1, name: null, email: 'ref@x.org', _raw: '{"ref":2}' }], 'coalesce');
    await unit.commit(plan('r3'));
    // Coalesce merges before replace in one commit, so the entity's own row has the last word.
    expect(await wh.query('SELECT name, email, _raw, _ref_only FROM people WHERE id = 1')).toEqual([
      { name: 'Ann Full', email: 'a@x.org', _raw: '{"full":1}', _ref_only: false },
    ]);
    unit = await wh.openLoad();
    await unit.append('people', [{ id: 1, name: null, email: 'new@x.org', _raw: '{"ref":3}' }], 'coalesce');
    await unit.commit(plan('r4'));
    // The entity's own stream is the authority: a later reference changes none of its columns.
    expect(await wh.query('SELECT name, email, _raw, _ref_only, _run_id FROM people WHERE id = 1')).toEqual([
      { name: 'Ann Full', email: 'a@x.org', _raw: '{"full":1}', _ref_only: false, _run_id: 'r4' },
    ]);
  });

  it('references merge to the same row whatever order they arrive in, the richest winning', async () => {
    const poor = { id: 7, name: 'P', email: null, _raw: '{"id":7,"name":"P"}' };
    const rich = { id: 7, name: 'Rich', email: 'r@x.org', _raw: '{"id":7,"name":"Rich","email":"r@x.org"}' };
    const results: unknown[] = [];
    for (const order of [
      [poor, rich],
      [rich, poor],
    ]) {
      await wh.exec('DELETE FROM people WHERE id = 7');
      for (const row of order) {
        const unit = await wh.openLoad();
        await unit.append('people', [row], 'coalesce');
        await unit.commit(plan('r7'));
      }
      results.push(await wh.query('SELECT name, email, _raw, _ref_only FROM people WHERE id = 7'));
      // Both in one staging batch, in either order, pick the same row too.
      await wh.exec('DELETE FROM people WHERE id = 7');
      const unit = await wh.openLoad();
      await unit.append('people', order, 'coalesce');
      await unit.commit(plan('r8'));
      results.push(await wh.query('SELECT name, email, _raw, _ref_only FROM people WHERE id = 7'));
    }
    expect(results[0]).toEqual([{ name: 'Rich', email: 'r@x.org', _raw: rich._raw, _ref_only: true }]);
    for (const r of results) expect(r).toEqual(results[0]);
  });

  it('a reference extracted later wins where it disagrees (a rename), whatever its richness; agreeing ones do not', async () => {
    const ref = (name: string | null, email: string | null) => ({
      id: 9,
      name,
      email,
      _raw: JSON.stringify({ id: 9, name, email }),
    });
    const load = async (at: string, ...commits: ReturnType<typeof ref>[][]): Promise<unknown> => {
      for (const rows of commits) {
        const unit = await wh.openLoad();
        await unit.append('people', rows, 'coalesce');
        await unit.commit(plan(`run ${at}`, at));
      }
      return (await wh.query('SELECT name, email, _raw, _extracted_at FROM people WHERE id = 9'))[0];
    };
    await wh.exec('DELETE FROM people WHERE id = 9');
    const first = await load('2024-06-01T00:00:00.000000Z', [ref('Alexandra', 'a@x.org')]);
    // Renamed to a shorter name: a poorer reference, but a later one that disagrees.
    const renamed = ref('Al', 'a@x.org');
    expect(await load('2024-06-02T00:00:00.000000Z', [renamed])).toEqual({
      name: 'Al',
      email: 'a@x.org',
      _raw: renamed._raw,
      _extracted_at: '2024-06-02T00:00:00.000000Z',
    });
    // A later reference that agrees where both have values changes no value; an earlier one that disagrees neither.
    const agreeing = await load('2024-06-03T00:00:00.000000Z', [ref(null, 'a@x.org')]);
    expect(agreeing).toMatchObject({ name: 'Al', _raw: renamed._raw, _extracted_at: '2024-06-03T00:00:00.000000Z' });
    expect(await load('2024-06-01T12:00:00.000000Z', [ref('Alexandra', 'a@x.org')])).toEqual(agreeing);
    expect(first).toMatchObject({ name: 'Alexandra' });

    // Within one run (a rename between two pages, or a resumed run) the richer reference wins whatever the order of
    // commits, as it does within one commit.
    const results: unknown[] = [];
    const later = ref('Alexandra', 'a@x.org');
    for (const [i, commits] of [[[renamed], [later]], [[later], [renamed]], [[renamed, later]]].entries()) {
      await wh.exec('DELETE FROM people WHERE id = 9');
      await load('2024-06-02T00:00:00.000000Z', [renamed]);
      results.push(await load(`2024-06-1${i}T00:00:00.000000Z`, ...commits));
    }
    for (const r of results) expect(r).toMatchObject({ name: 'Alexandra', _raw: later._raw });
  });

  it('complete scopes soft-delete only what is missing, never _ref_only rows; cascades follow', async () => {
    let unit = await wh.openLoad();
    await unit.append('notes', [
      { id: 'n1', thing_id: 1, kind: 'a', body: 'x', _raw: '{}' },
      { id: 'n2', thing_id: 1, kind: 'a', body: 'y', _raw: '{}' },
      { id: 'n3', thing_id: 2, kind: 'a', body: 'z', _raw: '{}' },
      { id: 'n4', thing_id: 1, kind: 'b', body: 'w', _raw: '{}' },
    ]);
    await unit.append('notes', [{ id: 'n5', thing_id: 1, kind: 'a', body: null, _raw: '{}' }], 'coalesce');
    await unit.append('thing_tags', [
      { thing_id: 1, tag: 'red', _raw: '"red"' },
      { thing_id: 1200, tag: 'blue', _raw: '"blue"' },
    ]);
    await unit.commit(plan('r5'));

    // A later scan of thing 1's notes of kind a returns only n1; thing 2 is not in scope.
    unit = await wh.openLoad();
    await unit.append('notes', [{ id: 'n1', thing_id: 1, kind: 'a', body: 'x', _raw: '{}' }]);
    // Asked before committing, what the deletions would touch: per parent, read only.
    const scope = (parentIds: number[]) => [
      { table: 'notes', where: { kind: 'a' }, parentColumn: 'thing_id', parentIds },
    ];
    expect(await unit.deletionCandidates(scope([1]))).toEqual({ any: true, parentIds: ['1'] });
    const both = await unit.deletionCandidates(scope([1, 2]));
    expect([...both.parentIds].sort()).toEqual(['1', '2']);
    expect(await unit.deletionCandidates(scope([3]))).toEqual({ any: false, parentIds: [] });
    const info = await unit.commit({
      ...plan('r6', '2024-06-01T00:00:00.000000Z'),
      completeScopes: [{ table: 'notes', where: { kind: 'a' }, parentColumn: 'thing_id', parentIds: [1] }],
    });
    expect(info.deleted).toEqual({ notes: 1 });
    const notes = await wh.query('SELECT id, _deleted_at FROM notes ORDER BY id');
    expect(notes).toEqual([
      { id: 'n1', _deleted_at: null },
      { id: 'n2', _deleted_at: '2024-06-01T00:00:00.000000Z' },
      { id: 'n3', _deleted_at: null },
      { id: 'n4', _deleted_at: null },
      { id: 'n5', _deleted_at: null },
    ]);

    // A complete scan of things without 1200: it goes, and so do its tags and notes (cascade).
    unit = await wh.openLoad();
    await unit.append(
      'things',
      Array.from({ length: 1199 }, (_, i) => thing(i + 1)),
    );
    expect(await unit.deletionCandidates([{ table: 'things' }])).toEqual({ any: true, parentIds: [] });
    const info2 = await unit.commit({
      ...plan('r7', '2024-07-01T00:00:00.000000Z'),
      completeScopes: [{ table: 'things' }],
      cascades: [{ table: 'thing_tags', column: 'thing_id', parentTable: 'things', parentColumn: 'id' }],
    });
    expect(info2.deleted).toEqual({ things: 1, thing_tags: 1 });
    expect(await wh.query('SELECT tag, _deleted_at FROM thing_tags ORDER BY tag')).toEqual([
      { tag: 'blue', _deleted_at: '2024-07-01T00:00:00.000000Z' },
      { tag: 'red', _deleted_at: null },
    ]);

    // It comes back: replace un-deletes. With every live row staged, nothing would be deleted.
    unit = await wh.openLoad();
    await unit.append('things', [thing(1200)]);
    await unit.append(
      'things',
      Array.from({ length: 1199 }, (_, i) => thing(i + 1)),
    );
    expect(await unit.deletionCandidates([{ table: 'things' }])).toEqual({ any: false, parentIds: [] });
    await unit.commit(plan('r8'));
    expect(await wh.query('SELECT _deleted_at FROM things WHERE id = 1200')).toEqual([{ _deleted_at: null }]);
  });

  it('a failing commit leaves tables and state unchanged, and staging can be retried', async () => {
    const before = await snapshot(wh, 'things');
    const stateBefore = await wh.readState('things');
    const unit = await wh.openLoad();
    await unit.append('things', [thing(1, { name: 'changed' }), thing(5000)]);
    await expect(
      unit.commit({
        ...plan('r9'),
        state: { stream: 'things', value: { cursor: 'new' } },
        cascades: [{ table: 'thing_tags', column: 'no_such_column', parentTable: 'things', parentColumn: 'id' }],
      }),
    ).rejects.toThrow();
    expect(await snapshot(wh, 'things')).toBe(before);
    expect(await wh.readState('things')).toEqual(stateBefore);
    const info = await unit.commit({ ...plan('r9'), state: { stream: 'things', value: { cursor: 'new' } } });
    expect(info.merged.things).toBe(2);
    expect(await wh.readState('things')).toEqual({ cursor: 'new' });
  });

  it('parent marks are upserted and dropped with the commit', async () => {
    let unit = await wh.openLoad();
    await unit.commit({
      ...plan('r10'),
      parentMarks: {
        stream: 'notes',
        marks: [
          { parentId: '1', marker: 'm1' },
          { parentId: '2', marker: null },
          { parentId: '1', marker: 'm1b' },
        ],
      },
    });
    expect(await wh.readParentMarks('notes')).toEqual(
      new Map([
        ['1', 'm1b'],
        ['2', null],
      ]),
    );
    unit = await wh.openLoad();
    await unit.commit({ ...plan('r11'), dropParentMarks: { stream: 'notes', parentIds: ['2'] } });
    expect(await wh.readParentMarks('notes')).toEqual(new Map([['1', 'm1b']]));
  });

  it('runs and credentials round-trip', async () => {
    await wh.saveRun({ runId: 'a', startedAt: '2024-01-01T00:00:00.000000Z', status: 'running' });
    await wh.saveRun({
      runId: 'a',
      startedAt: '2024-01-01T00:00:00.000000Z',
      finishedAt: '2024-01-01T00:01:00.000000Z',
      status: 'succeeded',
      summary: { n: 3 },
    });
    await wh.saveRun({ runId: 'b', startedAt: '2024-01-02T00:00:00.000000Z', status: 'failed' });
    const runs = await wh.listRuns(10);
    expect(runs.map((r) => [r.runId, r.status])).toEqual([
      ['b', 'failed'],
      ['a', 'succeeded'],
    ]);
    expect(runs[1]?.summary).toEqual({ n: 3 });
    expect(await wh.readCredentials('site')).toBeNull();
    const creds = { client_id: 'c', client_secret: 's', access_token: 'a', refresh_token: 'r1' };
    await wh.writeCredentials('site', creds);
    expect(await wh.readCredentials('site')).toEqual({ ...creds, seeded_from: null });
    await wh.writeCredentials('site', { ...creds, refresh_token: 'r2', seeded_from: 'h' });
    expect(await wh.readCredentials('site')).toEqual({ ...creds, refresh_token: 'r2', seeded_from: 'h' });
  });

  it('discard drops staged rows without touching tables', async () => {
    const before = await snapshot(wh, 'things');
    const unit = await wh.openLoad();
    await unit.append('things', [thing(9999)]);
    await unit.discard();
    expect(await snapshot(wh, 'things')).toBe(before);
    await expect(unit.append('things', [thing(1)])).rejects.toThrow(/discarded/);
  });

  it('rejects unknown tables and columns with a clear message', async () => {
    const unit = await wh.openLoad();
    await expect(unit.append('nope', [{ id: 1 }])).rejects.toThrow(/unknown table "nope"/);
    await expect(unit.append('things', [{ id: 1, bogus: 2 }])).rejects.toThrow(/column "bogus"/);
    await unit.discard();
  });

  it('refreshes statistics after a load only for tables without them or outgrown (Postgres), none on DuckDB', async () => {
    // Autovacuum would analyze the table on its own schedule, and could do so between the commit and the refresh.
    if (dialect === 'postgres') await wh.exec('ALTER TABLE thing_tags SET (autovacuum_enabled = false)');
    await wh.refreshStatistics(); // whatever earlier tests loaded
    expect(await wh.refreshStatistics()).toEqual([]);
    const unit = await wh.openLoad();
    await unit.append(
      'thing_tags',
      Array.from({ length: 3000 }, (_, i) => ({ thing_id: 900_000 + i, tag: `grown ${i}`, _raw: '{}' })),
    );
    await unit.commit(plan('stats'));
    const refreshed = await wh.refreshStatistics();
    if (dialect === 'duckdb') {
      expect(refreshed).toEqual([]);
      return;
    }
    expect(refreshed).toEqual([`"${h.schema}"."thing_tags"`]);
    const [stats] = await wh.query(`SELECT reltuples::bigint AS n FROM pg_class WHERE oid = $1::regclass`, [
      refreshed[0]!,
    ]);
    expect(stats).toEqual((await wh.query('SELECT count(*) AS n FROM thing_tags'))[0]);
    expect(await wh.refreshStatistics()).toEqual([]);
  });

  it('a bulk load leaves a core to the JavaScript: DuckDB runs one thread fewer, then has its count back', async () => {
    const threads = async (): Promise<number> =>
      Number((await wh.query(`SELECT current_setting('threads') AS n`))[0]?.n);
    const original = dialect === 'duckdb' ? await threads() : 0;
    if (dialect === 'duckdb') await wh.exec('SET GLOBAL threads = 3');
    try {
      const seen = await wh.whileBulkLoading(async () => (dialect === 'duckdb' ? threads() : 'ran'));
      expect(seen).toBe(dialect === 'duckdb' ? 2 : 'ran');
      await expect(
        wh.whileBulkLoading(async () => {
          throw new Error('load failed');
        }),
      ).rejects.toThrow('load failed');
      if (dialect === 'duckdb') expect(await threads()).toBe(3);
    } finally {
      if (dialect === 'duckdb') await wh.exec(`SET GLOBAL threads = ${original}`);
    }
  });
});
