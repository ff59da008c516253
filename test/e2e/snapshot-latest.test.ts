/**
 * `latest/<table>.parquet`, the stable path to each table's newest snapshot, in a local folder, synced in process into
 * a real DuckDB file and a real Postgres schema: after two syncs it holds one file per table, and a glob read over it
 * counts each warehouse row once (a glob over the `snapshot=` folders would count it twice); after a `sync --streams`
 * the tables that run did not touch keep their latest file and manifest entry (the same file, from the earlier run),
 * and the ones it touched are written again.
 */
import { createHash } from 'node:crypto';

import { readdirSync, readFileSync, statSync } from 'node:fs';

import { join } from 'node:path';

import { DuckDBInstance } from '@duckdb/node-api';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SimulatorHandle } from '../../src/simulator/index.ts';

import type { Manifest } from '../../src/snapshot/index.ts';

import { openWarehouse } from '../../src/warehouse/index.ts';

import { modelNames, postgresSchema, startSite, syncOnce, tempDir, writeCredentials } from '../support/harness.ts';
import { streamMappings, mappingOf } from '../../src/streams/registry.ts';

let sim: SimulatorHandle;
let work: Awaited<ReturnType<typeof tempDir>>;
let credentials: string;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 44 });
  work = await tempDir('grantflow-snapshot-latest-');
  credentials = await writeCredentials(sim, join(work.path, 'creds.json'));
});

afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
  await sim?.close();
  await work?.remove();
});

const readManifest = (snapshots: string): Manifest =>
  JSON.parse(readFileSync(join(snapshots, '_manifest.json'), 'utf8')) as Manifest;

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

const latestFiles = (snapshots: string): string[] =>
  readdirSync(join(snapshots, 'latest'))
    .filter((n) => n.endsWith('.parquet'))
    .sort();

/** Rows of each table as the warehouse holds them now. */
async function warehouseCounts(
  target: { warehouse: string; schema?: string },
  tables: readonly string[],
): Promise<Record<string, number>> {
  const warehouse = await openWarehouse(target.warehouse, {
    existingOnly: true,
    ...(target.schema ? { schema: target.schema } : {}),
  });
  try {
    const counts: Record<string, number> = {};
    for (const t of tables) counts[t] = Number((await warehouse.query(`SELECT count(*) AS n FROM "${t}"`))[0]?.n);
    return counts;
  } finally {
    await warehouse.close();
  }
}

/** What a reader pointing DuckDB at a glob gets: rows per file, read from the files themselves. */
async function globCounts(glob: string): Promise<Record<string, number>> {
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  try {
    const reader = await conn.runAndReadAll(
      `SELECT filename, count(*) AS n FROM read_parquet('${glob}', union_by_name = true, filename = true) GROUP BY filename`,
    );
    const out: Record<string, number> = {};
    for (const r of reader.getRowObjects()) {
      const table = String(r.filename)
        .split('/')
        .pop()!
        .replace(/\.parquet$/, '');
      out[table] = (out[table] ?? 0) + Number(r.n);
    }
    return out;
  } finally {
    conn.closeSync();
    duck.closeSync();
  }
}

/** Tables the stream's mapping declares it owns or cascades into: what a sync of it alone must write again. */
const tablesOfStream = (stream: keyof typeof streamMappings): string[] => [
  ...mappingOf(stream).owns.map((o) => o.table),
  ...mappingOf(stream).cascades.map((c) => c.table),
];

const engines = [
  { name: 'DuckDB', target: async () => ({ warehouse: join(work.path, 'latest.duckdb') }) },
  {
    name: 'Postgres',
    target: async () => {
      const pg = await postgresSchema();
      cleanup.push(pg.drop);
      return { warehouse: pg.url, schema: pg.schema };
    },
  },
];

describe.each(engines)('latest/ snapshots ($name)', { timeout: 300_000 }, ({ name, target: makeTarget }) => {
  const snapshots = (): string => join(work.path, `snapshots-${name}`);
  let target: { warehouse: string; schema?: string };
  let afterTwo: Manifest;
  const shaAfterTwo: Record<string, string> = {};
  const inodeAfterTwo: Record<string, number> = {};

  beforeAll(async () => {
    target = await makeTarget();
    const settings = { credentials, ...target, snapshot: true, snapshots: snapshots(), retainSnapshots: 2 };
    for (let i = 0; i < 2; i++) expect((await syncOnce(sim, settings)).status).toBe('succeeded');
    afterTwo = readManifest(snapshots());
    for (const t of Object.keys(afterTwo.tables)) {
      const file = join(snapshots(), 'latest', `${t}.parquet`);
      shaAfterTwo[t] = sha256(file);
      inodeAfterTwo[t] = statSync(file).ino;
    }
  });

  it('after two syncs holds one file per table, the newest, with the rows of the warehouse table', async () => {
    const tables = Object.keys(afterTwo.tables).sort();
    expect(tables).toEqual(expect.arrayContaining([...modelNames]));
    expect(latestFiles(snapshots())).toEqual(tables.map((t) => `${t}.parquet`));
    for (const [table, entry] of Object.entries(afterTwo.tables)) {
      expect(entry.latest).toBe(`latest/${table}.parquet`);
      expect(shaAfterTwo[table], `${table}: latest is the file the manifest names`).toBe(entry.sha256);
      // Two snapshots are kept: the glob over them would count every row twice.
      expect(readdirSync(join(snapshots(), table)).filter((f) => f.startsWith('snapshot='))).toHaveLength(2);
    }
    const expected = await warehouseCounts(target, tables);
    expect(Object.values(expected).some((n) => n > 0)).toBe(true);
    expect(await globCounts(join(snapshots(), 'latest', '*.parquet'))).toEqual(
      Object.fromEntries(Object.entries(expected).filter(([, n]) => n > 0)),
    );
  });

  it('a sync --streams writes again only what it touched; the others keep their latest file and entry', async () => {
    const settings = { credentials, ...target, snapshot: true, snapshots: snapshots(), retainSnapshots: 2 };
    const result = await syncOnce(sim, { ...settings, streams: ['funds'] });
    expect(result.status).toBe('succeeded');
    const after = readManifest(snapshots());
    expect(Object.keys(after.tables).sort()).toEqual(Object.keys(afterTwo.tables).sort());
    const rewritten = Object.keys(after.tables).filter((t) => after.tables[t]!.run_id === after.run_id);
    const kept = Object.keys(after.tables).filter((t) => after.tables[t]!.run_id !== after.run_id);
    // The stream's own table (every row merged again) and the models the sync rebuilt are written again; tables only
    // other streams write, and the models the sync skipped (none of their tables changed), are not.
    const summary = result.after?.summary as { modelsSkipped?: string[] } | undefined;
    const skipped = summary?.modelsSkipped ?? [];
    expect(skipped.length).toBeLessThan(modelNames.length);
    const rebuilt = modelNames.filter((m) => !skipped.includes(m));
    expect(rewritten).toEqual(expect.arrayContaining(['funds', ...rebuilt]));
    expect(kept).toEqual(
      expect.arrayContaining([...tablesOfStream('applications'), ...tablesOfStream('awards'), ...skipped]),
    );
    for (const table of kept) {
      const file = join(snapshots(), 'latest', `${table}.parquet`);
      expect(after.tables[table], `${table}: its entry is the earlier run's`).toEqual(afterTwo.tables[table]);
      expect(statSync(file).ino, `${table}: the same latest file`).toBe(inodeAfterTwo[table]);
      expect(sha256(file)).toBe(shaAfterTwo[table]);
    }
    for (const table of rewritten) {
      const file = join(snapshots(), 'latest', `${table}.parquet`);
      expect(after.tables[table]!.path).not.toBe(afterTwo.tables[table]!.path);
      expect(statSync(file).ino, `${table}: a new latest file`).not.toBe(inodeAfterTwo[table]);
      expect(sha256(file)).toBe(after.tables[table]!.sha256);
    }
    // Still one file per table, counting the warehouse's rows once.
    const expected = await warehouseCounts(target, Object.keys(after.tables));
    expect(await globCounts(join(snapshots(), 'latest', '*.parquet'))).toEqual(
      Object.fromEntries(Object.entries(expected).filter(([, n]) => n > 0)),
    );
  });
});
