import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runModels } from '../../src/models/index.ts';
import { checkSnapshotDir, readManifest, writeSnapshots } from '../../src/snapshot/index.ts';
import { ConfigError, ExitCode, GrantflowError, isGrantflowError } from '../../src/util/errors.ts';
import type { Dialect } from '../../src/warehouse/index.ts';
import { load, openTestWarehouse, type TestWarehouse } from '../support/model-fixtures.ts';
import { tempDir } from '../support/temp-dir.ts';

const rowsOf = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    title: `App ${i + 1} — "quoted", ünïcode`,
    state: i % 5,
    program_id: 1 + (i % 3),
    awarded_amount: `${i}.${String(i % 100).padStart(2, '0')}`,
    average_score: i / 7,
    created_at: `2025-03-04T05:06:07.${String(i % 1_000_000).padStart(6, '0')}Z`,
  }));

async function metadata(path: string) {
  return parquetMetadataAsync(await asyncBufferFromFile(path));
}

const schemaOf = async (path: string) =>
  Object.fromEntries((await metadata(path)).schema.slice(1).map((s) => [s.name, s]));

describe.each<Dialect>(['duckdb', 'postgres'])('snapshots of a %s warehouse', (dialect) => {
  let t: TestWarehouse;
  let dir: string;
  let removeDir: (() => Promise<void>) | undefined;
  const n = 2500;
  beforeAll(async () => {
    t = await openTestWarehouse(dialect, 'snap');
    ({ path: dir, remove: removeDir } = await tempDir('gf-snapshots-'));
    await load(t.warehouse, { programs: [1, 2, 3].map((id) => ({ id, name: `P${id}` })), applications: rowsOf(n) });
    await runModels(t.warehouse, { only: ['award_rates'] });
  });
  afterAll(async () => {
    await t?.cleanup();
    await removeDir?.();
  });
  /** A snapshot of award_rates into `sub`, taken at second `second` of 2026-01-01 UTC. */
  const awardRatesAt = (sub: string, runId: string, retain: number, second: number) =>
    writeSnapshots(t.warehouse, {
      dir: sub,
      runId,
      retain,
      tables: ['award_rates'],
      now: new Date(Date.UTC(2026, 0, 1, 0, 0, second)),
    });

  it('writes zstd Parquet with UTC timestamp and decimal logical types, and a manifest', async () => {
    const result = await writeSnapshots(t.warehouse, {
      dir,
      runId: 'run-1',
      retain: 3,
      tables: ['applications', 'award_rates'],
      now: new Date('2026-11-21T23:59:59.500Z'),
    });
    expect(result.snapshot).toBe('2026-11-21T23-59-59Z');
    const file = join(dir, 'applications', 'snapshot=2026-11-21T23-59-59Z', 'applications.parquet');
    const md = await metadata(file);
    expect(Number(md.num_rows)).toBe(n);
    expect(md.row_groups[0]?.columns[0]?.meta_data?.codec).toBe('ZSTD');
    const schema = await schemaOf(file);
    expect(schema.created_at?.logical_type).toMatchObject({ type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' });
    expect(schema.awarded_amount?.logical_type).toMatchObject({ type: 'DECIMAL', precision: 18, scale: 2 });
    expect(schema.id?.type).toBe('INT64');
    // Each row's source JSON is left out by default (`snapshotRaw`); the snapshot's time is in every row.
    expect(schema._raw).toBeUndefined();
    expect(schema._snapshot_at?.logical_type).toMatchObject({
      type: 'TIMESTAMP',
      isAdjustedToUTC: true,
      unit: 'MICROS',
    });
    const rates = await schemaOf(join(dir, 'award_rates', 'snapshot=2026-11-21T23-59-59Z', 'award_rates.parquet'));
    expect(rates.award_rate?.logical_type).toMatchObject({ type: 'DECIMAL', precision: 9, scale: 6 });

    const manifest = readManifest(dir);
    const entry = manifest?.tables.applications;
    expect(entry).toMatchObject({
      path: 'applications/snapshot=2026-11-21T23-59-59Z/applications.parquet',
      rows: n,
      run_id: 'run-1',
    });
    expect(entry?.sha256).toBe(createHash('sha256').update(readFileSync(file)).digest('hex'));
    expect(entry?.schema.find((c) => c.name === 'created_at')?.type).toBe('TIMESTAMP WITH TIME ZONE');
    expect(entry?.schema.find((c) => c.name === 'awarded_amount')?.type).toBe('DECIMAL(18,2)');
    expect(manifest?.tables.award_rates?.rows).toBe(3);
  });

  it('round-trips values through a reader other than DuckDB (hyparquet, snappy since it has no zstd codec)', async () => {
    const sub = join(dir, 'snappy');
    await writeSnapshots(t.warehouse, {
      dir: sub,
      runId: 'run-s',
      retain: 1,
      tables: ['applications'],
      compression: 'snappy',
    });
    const entry = readManifest(sub)?.tables.applications;
    const rows = await parquetReadObjects({ file: await asyncBufferFromFile(join(sub, entry?.path ?? '')) });
    expect(rows).toHaveLength(n);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    for (const src of rowsOf(n).filter((_, i) => i % 97 === 0)) {
      const got = byId.get(src.id);
      expect(got?.title).toBe(src.title);
      expect(got?.created_at).toBeInstanceOf(Date);
      expect((got?.created_at as Date).toISOString()).toBe(new Date(src.created_at).toISOString());
      expect(Number(got?.awarded_amount)).toBeCloseTo(Number(src.awarded_amount), 2);
      expect(got?.average_score).toBeCloseTo(src.average_score, 12);
      expect(got?._deleted_at).toBeNull();
    }
  });

  it('writes the snapshot time to every row as _snapshot_at, and _raw only when asked, as text', async () => {
    const sub = join(dir, 'with-raw');
    const at = new Date('2026-05-06T07:08:09.123Z');
    await writeSnapshots(t.warehouse, {
      dir: sub,
      runId: 'run-raw',
      retain: 1,
      tables: ['applications'],
      compression: 'snappy',
      now: at,
      raw: true,
    });
    const path = join(sub, readManifest(sub)?.tables.applications?.path ?? '');
    const schema = await schemaOf(path);
    // Text, not JSON: DuckDB cuts string statistics at 256 bytes, which a reader parsing JSON statistics fails on.
    expect(schema._raw?.converted_type).toBe('UTF8');
    expect(schema._raw?.logical_type).toBeUndefined();
    const rows = await parquetReadObjects({
      file: await asyncBufferFromFile(path),
      columns: ['id', '_raw', '_snapshot_at'],
    });
    expect(rows).toHaveLength(n);
    const stored = new Map(
      (await t.warehouse.query('SELECT id, CAST(_raw AS VARCHAR) AS raw FROM applications')).map((r) => [
        Number(r.id),
        String(r.raw),
      ]),
    );
    for (const r of rows) {
      expect((r._snapshot_at as Date).toISOString()).toBe(at.toISOString());
      expect(r._raw).toBe(stored.get(Number(r.id)));
    }
  });

  it('keeps the newest N snapshots per table and removes stray temporary files', async () => {
    const sub = join(dir, 'retention');
    for (let i = 0; i < 4; i++) await awardRatesAt(sub, `r${i}`, 2, i);
    writeFileSync(join(sub, 'award_rates', '.award_rates.crashed.tmp'), 'partial');
    // A write killed between its two renames leaves a hidden folder, never a visible empty `snapshot=` one.
    mkdirSync(join(sub, 'award_rates', '.snapshot=2026-01-01T00-00-09Z.tmp'));
    writeFileSync(join(sub, 'award_rates', '.snapshot=2026-01-01T00-00-09Z.tmp', 'award_rates.parquet'), 'PAR1');
    writeFileSync(join(sub, '._manifest.json.1.tmp'), '{');
    // Same second as the last one: a suffix keeps both.
    const last = await awardRatesAt(sub, 'r4', 2, 3);
    expect(last.snapshot).toBe('2026-01-01T00-00-03Z-001');
    expect(readdirSync(join(sub, 'award_rates')).sort()).toEqual([
      'snapshot=2026-01-01T00-00-03Z',
      'snapshot=2026-01-01T00-00-03Z-001',
    ]);
    expect(readdirSync(sub).sort()).toEqual(['_manifest.json', 'award_rates', 'latest']);
    expect(readdirSync(join(sub, 'latest'))).toEqual(['award_rates.parquet']);
    expect(readManifest(sub)?.tables.award_rates?.run_id).toBe('r4');
  });

  it('retention removes only what grantflow wrote: other folders and hidden files next to its own stay', async () => {
    const sub = join(dir, 'shared');
    const theirs = [
      join(sub, '.bi-refresh.tmp'),
      join(sub, 'award_rates', 'snapshot=2025-12-31-manual-copy', 'award_rates.parquet'),
      join(sub, 'award_rates', '.analyst-notes.tmp'),
      join(sub, 'award_rates', '.scratch.tmp', 'query.sql'),
    ];
    for (const path of theirs) {
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, 'not grantflow');
    }
    for (let i = 0; i < 3; i++) await awardRatesAt(sub, `s${i}`, 1, i);
    for (const path of theirs) expect(existsSync(path), path).toBe(true);
    const folders = readdirSync(join(sub, 'award_rates')).filter((n) => n.startsWith('snapshot=2026'));
    expect(folders).toEqual(['snapshot=2026-01-01T00-00-02Z']);
  });

  it('writes a table named twice once', async () => {
    const sub = join(dir, 'twice');
    const result = await writeSnapshots(t.warehouse, {
      dir: sub,
      runId: 'd',
      retain: 1,
      tables: ['award_rates', 'award_rates'],
    });
    expect(result.tables.map((x) => x.table)).toEqual(['award_rates']);
    expect(readdirSync(join(sub, 'award_rates'))).toEqual([`snapshot=${result.snapshot}`]);
  });

  it('never removes the snapshot the manifest names, even after the clock went back', async () => {
    const sub = join(dir, 'clock');
    for (const [runId, at] of [
      ['later', '2026-01-01T00:00:10Z'],
      // The system clock was set back (NTP step, a VM restored): this folder name sorts before the previous one.
      ['earlier', '2026-01-01T00:00:05Z'],
    ] as const) {
      await writeSnapshots(t.warehouse, { dir: sub, runId, retain: 1, tables: ['award_rates'], now: new Date(at) });
    }
    const entry = readManifest(sub)?.tables.award_rates;
    expect(entry?.run_id).toBe('earlier');
    expect(existsSync(join(sub, entry?.path ?? 'missing'))).toBe(true);
    expect(readdirSync(join(sub, 'award_rates'))).toEqual([`snapshot=${entry?.snapshot}`]);
  });

  it('never exposes a partial .parquet file, and leaves nothing behind when a table fails (no snapshot= folder of the run either)', async () => {
    const sub = join(dir, 'atomic');
    const seen = new Map<string, number>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const tableDir = join(sub, 'applications');
        // A visible snapshot folder always holds its file.
        for (const f of existsSync(tableDir) ? readdirSync(tableDir) : []) {
          if (f.startsWith('snapshot=')) expect(readdirSync(join(tableDir, f))).toEqual(['applications.parquet']);
        }
        for (const f of existsSync(tableDir) ? readdirSync(tableDir, { recursive: true, encoding: 'utf8' }) : []) {
          if (!f.endsWith('.parquet')) continue;
          const path = join(tableDir, f);
          // A visible .parquet file is always complete: it ends with the Parquet magic.
          const bytes = readFileSync(path);
          expect(bytes.subarray(bytes.length - 4).toString()).toBe('PAR1');
          seen.set(path, bytes.length);
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    await expect(
      writeSnapshots(t.warehouse, { dir: sub, runId: 'x', retain: 1, tables: ['applications', 'no_such_table'] }),
    ).rejects.toThrow(/no_such_table does not exist/);
    watching = false;
    await watch;
    // A file seen was never rewritten; the failed run's files are gone with their folders.
    for (const [path, size] of seen) if (existsSync(path)) expect(statSync(path).size).toBe(size);
    expect(seen.size).toBeGreaterThan(0);
    // The table written before the failing one has no new snapshot= folder: a reader globbing the folders sees no
    // set the manifest never named.
    expect(readdirSync(join(sub, 'applications')).filter((f) => f.startsWith('snapshot='))).toEqual([]);
    const noSuch = join(sub, 'no_such_table');
    expect(existsSync(noSuch) ? readdirSync(noSuch, { recursive: true, encoding: 'utf8' }) : []).toEqual([]);
    const leftovers = readdirSync(sub, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tmp'));
    expect(leftovers).toEqual([]);
    expect(existsSync(join(sub, '_manifest.json'))).toBe(false);
  });
  it('a table that cannot be written fails with a message naming it, not an unexpected error', async () => {
    const sub = join(dir, 'blocked');
    mkdirSync(sub, { recursive: true });
    // A file where the table's folder goes (on a server: a full disk, a folder another user owns).
    writeFileSync(join(sub, 'award_rates'), 'not a folder');
    const failure = await writeSnapshots(t.warehouse, {
      dir: sub,
      runId: 'b',
      retain: 1,
      tables: ['applications', 'award_rates'],
    }).catch((e: unknown) => e);
    expect(isGrantflowError(failure)).toBe(true);
    expect((failure as GrantflowError).exitCode).toBe(ExitCode.runFailed);
    const blocked = join(sub, 'award_rates');
    expect((failure as Error).message).toBe(
      `could not write the snapshot of award_rates in ${blocked}: ${blocked} is a file, not a directory; the manifest still names the last good snapshot`,
    );
    expect(existsSync(join(sub, '_manifest.json'))).toBe(false);
  });
});

describe('checkSnapshotDir', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ path: base, remove: cleanup } = await tempDir('gf-snapdir-'));
  });
  afterEach(async () => cleanup());

  it('accepts a directory it could create, leaving nothing behind, and rejects one that cannot be written', () => {
    // A check only: the sync creates the directory when it writes the snapshots.
    checkSnapshotDir(join(base, 'a', 'b'));
    expect(readdirSync(base)).toEqual([]);
    mkdirSync(join(base, 'kept'));
    checkSnapshotDir(join(base, 'kept'));
    expect(readdirSync(base)).toEqual(['kept']);
    expect(readdirSync(join(base, 'kept'))).toEqual([]);
    // mkdir makes `new` and then fails on a name too long: the check removes `new` again.
    expect(() => checkSnapshotDir(join(base, 'new', 'x'.repeat(300)))).toThrow(ConfigError);
    expect(readdirSync(base)).toEqual(['kept']);
    writeFileSync(join(base, 'file'), 'x');
    expect(() => checkSnapshotDir(join(base, 'file', 'snapshots'))).toThrow(ConfigError);
    expect(() => checkSnapshotDir(join(base, 'file', 'snapshots'))).toThrow(/not writable .*--snapshots/);
  });
});
