import { runCliInProcess } from '../support/cli-in-process.ts';
import { filesUnder, strings } from '../support/served-values.ts';
/**
 * The purge (`purgeDeletedAfter`), on both engines: three applications deleted on the simulator, a sync that
 * soft-deletes them, `grantflow purge --dry-run` (counts only, nothing changed), then the purge past the window (`0s`:
 * on DuckDB by `grantflow purge`, on PostgreSQL by the next sync): none of their answers, notes or records remains in
 * any table of the warehouse, in the raw pages or in the kept snapshots; an applicant named only by them keeps no name
 * or email; every other row is as it was.
 */
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { JsonObject } from '../../src/util/json.ts';
import { tables as catalog } from '../../src/streams/registry.ts';
import { collectionNames } from '../../src/simulator/control.ts';
import {
  postgresSchema,
  postgresUrl,
  startSite,
  syncCliArgs,
  tempDir,
  writeCredentials,
  type CliResult,
} from '../support/harness.ts';
import { api } from '../support/simulator-api.ts';

const engines = ['duckdb', 'postgres'] as const;
type Engine = (typeof engines)[number];
type Rows = Record<string, unknown>[];

/** The free text of applications: each one's answers and notes, as the site serves them. */
function textsOf(sim: SimulatorHandle, ids: readonly number[]): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  for (const id of ids) {
    const texts = new Set<string>();
    for (const t of sim.control.collection('application_tasks', { application: id }))
      strings(t.data).forEach((s) => texts.add(s));
    for (const n of sim.control.collection('application_notes', { application: id })) texts.add(String(n.content));
    out.set(id, texts);
  }
  return out;
}

/** Raw files (gunzipped) under `dir` holding any of `texts`, with what they hold. */
function rawHolding(dir: string, texts: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of filesUnder(dir).filter((f) => f.endsWith('.jsonl.gz'))) {
    const text = gunzipSync(readFileSync(file)).toString('utf8');
    for (const t of texts) if (text.includes(JSON.stringify(t).slice(1, -1))) found.push(`${file}: ${t}`);
  }
  return found;
}

/** Parquet files under `dir` holding any of `texts` in a cell. */
async function snapshotsHolding(dir: string, texts: readonly string[]): Promise<string[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const duck = await instance.connect();
  const found: string[] = [];
  try {
    for (const file of filesUnder(dir).filter((f) => f.endsWith('.parquet'))) {
      const text = JSON.stringify(
        (await duck.runAndReadAll(`SELECT * FROM read_parquet('${file}')`)).getRowObjectsJson(),
      );
      for (const t of texts) if (text.includes(JSON.stringify(t).slice(1, -1))) found.push(`${file}: ${t}`);
    }
  } finally {
    duck.closeSync();
    instance.closeSync();
  }
  return found;
}

describe.each(engines)('purge on %s', (engine: Engine) => {
  let sim: SimulatorHandle;
  let work: { path: string; remove: () => Promise<void> };
  let warehouseArgs: string[];
  let pgSchema: Awaited<ReturnType<typeof postgresSchema>> | undefined;
  let deleted: number[];
  /** Answers and notes of the deleted applications that no other application has. */
  let theirTexts: string[];
  /** Emails of applicants the deleted applications alone named. */
  let onlyTheirs: string[];
  let before: Map<string, Rows>;
  let dryRun: CliResult;
  let purge: CliResult;
  let afterDryRun: Map<string, Rows>;
  /** Raw files and snapshots that held their texts before the purge: what the purge must prune. */
  let rawBefore: string[];
  let snapshotsBefore: string[];

  /** Every base table of the warehouse (its schema, models, bookkeeping), each row as it is read. */
  async function readWarehouse(): Promise<Map<string, Rows>> {
    const out = new Map<string, Rows>();
    if (engine === 'duckdb') {
      const instance = await DuckDBInstance.create(join(work.path, 'warehouse.duckdb'), { access_mode: 'READ_ONLY' });
      const duck = await instance.connect();
      try {
        const list = (
          await duck.runAndReadAll(
            "SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE'",
          )
        ).getRowObjectsJson();
        for (const { s, t } of list)
          out.set(
            `${String(s)}.${String(t)}`,
            (await duck.runAndReadAll(`SELECT * FROM "${String(s)}"."${String(t)}"`)).getRowObjectsJson(),
          );
      } finally {
        duck.closeSync();
        instance.closeSync();
      }
      return out;
    }
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      const schema = pgSchema?.schema ?? '';
      const { rows: list } = await client.query<{ s: string; t: string }>(
        "SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema IN ($1, $2)",
        [schema, `${schema}_analytics`],
      );
      for (const { s, t } of list) out.set(`${s}.${t}`, (await client.query(`SELECT * FROM "${s}"."${t}"`)).rows);
    } finally {
      await client.end();
    }
    return out;
  }

  /** A table of the warehouse's schema, qualified. */
  const qualified = (table: string): string =>
    engine === 'duckdb' ? `main.${table}` : `"${pgSchema?.schema ?? ''}".${table}`;

  /** One statement on the warehouse, outside grantflow (no sync runs meanwhile). */
  async function execute(sql: string): Promise<void> {
    if (engine === 'duckdb') {
      const instance = await DuckDBInstance.create(join(work.path, 'warehouse.duckdb'));
      const duck = await instance.connect();
      try {
        await duck.run(sql);
      } finally {
        duck.closeSync();
        instance.closeSync();
      }
      return;
    }
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  const sync = (extra: string[] = []): Promise<CliResult> =>
    runCliInProcess([...syncCliArgs(sim.url, work.path, { snapshot: true, warehouse: warehouseArgs }), ...extra]);

  beforeAll(async () => {
    sim = await startSite({ seed: 46 });
    work = await tempDir('grantflow-purge-');
    await writeCredentials(sim, join(work.path, 'creds.json'));
    if (engine === 'postgres') {
      pgSchema = await postgresSchema();
      warehouseArgs = ['--warehouse', postgresUrl, '--schema', pgSchema.schema];
    } else warehouseArgs = ['--warehouse', join(work.path, 'warehouse.duckdb')];
    const first = await sync();
    expect(first.code, first.stderr).toBe(0);

    const apps = sim.control.collection('applications');
    const applicantOf = new Map(apps.map((a) => [Number(a.id), a.applicant as JsonObject]));
    const allTexts = textsOf(
      sim,
      apps.map((a) => Number(a.id)),
    );
    // What the site serves, anywhere (it has no users endpoint: a user is served only inside the records naming
    // them), to find an applicant named by one application alone: deleting it leaves them named by nothing live.
    const servedNow = (): string =>
      collectionNames
        .filter((c) => !['users', 'stages', 'statuses'].includes(c))
        .map((c) => JSON.stringify(sim.control.collection(c)))
        .join('\n');
    const everything = servedNow();
    const alone = apps.find((a) => everything.split(String(applicantOf.get(Number(a.id))?.email)).length === 2);
    expect(alone).toBeDefined();
    const others = apps.filter((a) => a !== alone).slice(-2);
    deleted = [alone, ...others].map((a) => Number(a?.id));
    for (const id of deleted)
      expect((await api(sim, `/api/applications/${id}/`, { method: 'DELETE' })).status).toBe(204);
    const servedText = servedNow();
    const served = new Set<string>();
    for (const [id, texts] of allTexts) if (!deleted.includes(id)) texts.forEach((t) => served.add(t));
    theirTexts = deleted
      .flatMap((id) => [...(allTexts.get(id) ?? [])])
      .filter((t) => t.length >= 6 && !served.has(t) && !servedText.includes(JSON.stringify(t)));
    onlyTheirs = deleted.map((id) => String(applicantOf.get(id)?.email)).filter((email) => !servedText.includes(email));

    const second = await sync();
    expect(second.code, second.stderr).toBe(0);
    // A history companion, as a table keeping every version of a row would be: the purge must reach it too.
    await execute(
      `CREATE TABLE ${qualified('application_notes_history')} AS SELECT *, 1 AS version FROM ${qualified('application_notes')}`,
    );
    before = await readWarehouse();
    rawBefore = rawHolding(join(work.path, 'raw'), [...theirTexts, ...onlyTheirs]);
    snapshotsBefore = await snapshotsHolding(join(work.path, 'snapshots'), [...theirTexts, ...onlyTheirs]);
    dryRun = await runCliInProcess(['purge', '--dry-run', '--purge-deleted-after', '0s', ...warehouseArgs]);
    afterDryRun = await readWarehouse();
    purge =
      engine === 'duckdb'
        ? await runCliInProcess([
            'purge',
            '--purge-deleted-after',
            '0s',
            ...warehouseArgs,
            '--raw-dir',
            join(work.path, 'raw'),
            '--snapshots',
            join(work.path, 'snapshots'),
          ])
        : await sync(['--purge-deleted-after', '0s']);
  }, 600_000);

  afterAll(async () => {
    await sim?.close();
    await work?.remove();
    await pgSchema?.drop();
  });

  it('finds something to look for, in the raw pages and the snapshots too', () => {
    expect(theirTexts.length).toBeGreaterThan(3);
    expect(onlyTheirs.length).toBeGreaterThan(0);
    expect(rawBefore.length).toBeGreaterThan(3);
    expect(snapshotsBefore.length).toBeGreaterThan(3);
    const apps = [...before.entries()].find(([k]) => k.endsWith('.applications'))?.[1] ?? [];
    expect(apps.filter((a) => deleted.includes(Number(a.id)) && a._deleted_at !== null)).toHaveLength(3);
  });

  it('--dry-run counts per table, shows no value and changes nothing', () => {
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stdout).toMatch(/^ {2}applications +3$/m);
    expect(dryRun.stdout).toMatch(/application_notes +\d+/);
    expect(dryRun.stdout).toMatch(/users \(named only by those rows\) +\d+/);
    expect(dryRun.stdout).toMatch(/application_notes_history +\d+/);
    expect(dryRun.stdout).toContain('dry run: nothing was changed');
    for (const t of [...theirTexts, ...onlyTheirs]) expect(dryRun.stdout + dryRun.stderr).not.toContain(t);
    expect(afterDryRun).toEqual(before);
  });

  it('leaves none of their answers, notes, records or only-theirs persons in the warehouse', async () => {
    expect(purge.code, purge.stderr).toBe(0);
    expect(purge.stdout).toMatch(/purge: \d+ rows soft-deleted at or before .* removed \(.*applications 3/);
    const after = await readWarehouse();
    const found: string[] = [];
    for (const [table, rows] of after) {
      const text = JSON.stringify(rows);
      for (const t of [...theirTexts, ...onlyTheirs])
        if (text.includes(JSON.stringify(t).slice(1, -1))) found.push(`${table}: ${t}`);
    }
    expect(found).toEqual([]);
    for (const [table, rows] of after) {
      if (
        !/\.(applications|application_stages|application_tasks|task_responses|application_notes(_history)?)$/.test(
          table,
        )
      )
        continue;
      const column = table.endsWith('.applications') ? 'id' : 'application_id';
      expect(
        rows.filter((r) => deleted.includes(Number(r[column]))),
        table,
      ).toEqual([]);
    }
  });

  it('leaves every other row as it was', async () => {
    const after = await readWarehouse();
    const runColumns = new Set(['_extracted_at', '_run_id']);
    const plain = (r: Record<string, unknown>): string =>
      JSON.stringify(Object.entries(r).filter(([c]) => !runColumns.has(c)));
    const core = new Set(catalog.filter((t) => t.kind !== 'bookkeeping').map((t) => t.name));
    let compared = 0;
    for (const [table, rows] of before) {
      const name = table.split('.').at(-1) ?? '';
      if ((!core.has(name) && name !== 'application_notes_history') || name === 'users') continue;
      // Every row not soft-deleted stays, unchanged (a soft-deleted row is past a window of 0s: it goes).
      const expected = rows
        .filter((r) => r._deleted_at === null)
        .map(plain)
        .sort();
      expect((after.get(table) ?? []).map(plain).sort(), table).toEqual(expected);
      compared++;
    }
    expect(compared).toBeGreaterThan(20);
    const usersKey = [...before.keys()].find((k) => k.endsWith('.users')) ?? '';
    const expectedUsers = (before.get(usersKey) ?? []).filter((u) => !onlyTheirs.includes(String(u.email)));
    const afterUsers = after.get(usersKey) ?? [];
    // The persons only they named go; others may go too when every row naming them was deleted: none other stays changed.
    expect(afterUsers.every((u) => expectedUsers.map(plain).includes(plain(u)))).toBe(true);
    expect(afterUsers.length).toBeGreaterThan(expectedUsers.length - 10);
  });

  it('prunes the raw pages of every run of them', () => {
    const pages = filesUnder(join(work.path, 'raw')).filter((f) => f.endsWith('.jsonl.gz'));
    expect(pages.length).toBeGreaterThan(10);
    const found = rawHolding(join(work.path, 'raw'), [...theirTexts, ...onlyTheirs]);
    for (const file of pages.filter((f) => /application_(stages|tasks|notes)/.test(f))) {
      for (const line of gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean)) {
        const parsed = JSON.parse(line) as { parentId?: number };
        if (deleted.includes(Number(parsed.parentId))) found.push(`${file}: page of application ${parsed.parentId}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('keeps no snapshot that holds them', async () => {
    expect(filesUnder(join(work.path, 'snapshots')).filter((f) => f.endsWith('.parquet')).length).toBeGreaterThan(20);
    expect(await snapshotsHolding(join(work.path, 'snapshots'), [...theirTexts, ...onlyTheirs])).toEqual([]);
  });
});
