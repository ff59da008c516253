/**
 * Issue 23 acceptance: adding a plain list endpoint is one declaration and one line in the list of streams. The
 * stream below is declared here, joins a catalog this file builds (the built-in streams and it) and is served by a
 * list this file adds to the simulator; nothing else in src/ names it, yet a sync handed that catalog extracts, maps,
 * creates and documents it on DuckDB and Postgres alike. The catalog is this file's own: no other suite sees it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { col, id, money, ref, tsCol } from '../../src/streams/columns.ts';
import { defineStream } from '../../src/streams/stream-definition.ts';
import { builtinStreams, defaultCatalog } from '../../src/streams/registry.ts';
import { buildStreamCatalog, type StreamCatalog } from '../../src/streams/catalog.ts';
import { renderDataDictionary } from '../../src/docs/data-dictionary.ts';
import { runDataTests } from '../../src/models/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { SyncResult } from '../../src/pipeline/sync.ts';
import { runReplay } from '../../src/pipeline/replay.ts';
import type { SettingsInput } from '../../src/config/settings.ts';
import type { CellValue } from '../../src/normalize/table-def.ts';
import type { JsonObject, JsonValue } from '../../src/util/json.ts';
import { silentLogger } from '../../src/util/logger.ts';
import {
  dumpWarehouse,
  postgresSchema,
  startSite,
  summarize,
  syncOnce,
  tempDir,
  writeCredentials,
} from '../support/harness.ts';

const path = '/api/grant-cycles/';

/** The whole declaration of the new endpoint: what a user adds as src/streams/grant-cycles.ts. */
const grantCycles = defineStream({
  name: 'grant_cycles',
  path,
  description: 'Grant cycles (an endpoint the spec does not list).',
  table: {
    name: 'grant_cycles',
    kind: 'entity',
    description: 'Grant cycles (GET /api/grant-cycles/).',
    primaryKey: ['id'],
    columns: [
      id('Grant cycle id.'),
      col('name', 'text', 'Name of the cycle.'),
      money('amount', 'Money the cycle awards'),
      tsCol('opens_at', 'When the cycle opens'),
      ref('owner_id', 'users', 'User who runs the cycle.'),
      ref('program_id', 'programs', 'Program of the cycle.'),
      col('region_name', 'text', 'Name of the region the cycle is for.', { source: 'region.name' }),
    ],
  },
});

/** The SQL type each declared column type has on DuckDB and on Postgres (information_schema spelling). */
const sqlTypes: Record<string, { duckdb: string; postgres: string }> = {
  bigint: { duckdb: 'BIGINT', postgres: 'bigint' },
  text: { duckdb: 'VARCHAR', postgres: 'text' },
  decimal: { duckdb: 'DECIMAL(18,2)', postgres: 'numeric(18,2)' },
  timestamptz: { duckdb: 'TIMESTAMP WITH TIME ZONE', postgres: 'timestamp with time zone' },
};

/** Users only these records name (no other record of the site mentions them). */
const newOwners: JsonObject[] = [
  { id: 770_000_001, first_name: 'Cycle', last_name: 'Keeper', email: 'cycle.keeper@example.org' },
  { id: 770_000_002, first_name: 'Round', last_name: 'Runner', email: 'round.runner@example.org' },
];

/** A field one record holds that the declaration does not read. */
const unmappedField = 'legacy_code';

/**
 * 30 records (two pages of 25): money beyond a double's exact range and as JSON numbers, times with an offset that
 * moves them to the next day in UTC and times in UTC, owners of the site and owners only these records name.
 */
function cycleRecords(siteUsers: readonly JsonObject[], programs: readonly JsonObject[]): JsonObject[] {
  return Array.from({ length: 30 }, (_, i): JsonObject => {
    const program = programs[i % programs.length]!;
    const day = String(1 + (i % 28)).padStart(2, '0');
    const record: JsonObject = {
      id: 4100 + i,
      name: `Cycle ${i}`,
      amount: i % 4 === 0 ? i * 1000 + 0.25 : `${98_765_432_109_876 - i}.${String(i).padStart(2, '0')}`,
      opens_at:
        i % 2 === 0 ? `2026-03-${day}T22:30:15.${String(i).padStart(3, '0')}-05:00` : `2026-04-${day}T08:00:00Z`,
      owner: i % 5 === 0 ? newOwners[(i / 5) % 2]! : siteUsers[i % siteUsers.length]!,
      program: { id: program.id!, name: program.name! },
      region: { name: `Region ${i % 4}` },
    };
    if (i === 7) record[unmappedField] = 'GC-7';
    return record;
  });
}

/** What the warehouse holds for a record's money: the exact decimal with two places. */
function expectedMoney(v: JsonValue): string {
  if (typeof v === 'number') return v.toFixed(2);
  if (typeof v === 'string') return v;
  throw new Error('records above send money as numbers or strings');
}

/** What the warehouse holds for a timestamp with a zone: the instant in UTC, with microseconds. */
const expectedTimestamp = (v: JsonValue): string => new Date(String(v)).toISOString().replace('Z', '000Z');

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let pgTarget: Awaited<ReturnType<typeof postgresSchema>>;
let credentials: string;
let records: JsonObject[];
/** What the site's list serves: `records` at first (the simulator reads it at each request). */
let served: JsonObject[];
/** The DuckDB sync that first read the new endpoint landed its pages here, as run `landedRun`. */
let rawDir: string;
let landedRun: string;

interface Engine {
  readonly name: string;
  readonly target: string;
  readonly schema?: string;
}
let engines: Engine[];
/** The built-in streams and grant_cycles: what src/streams/registry.ts lists once a user adds its line. */
const withGrantCycles = buildStreamCatalog([...builtinStreams, grantCycles]);
/** The catalog the syncs are handed: the built-in one until the endpoint is added. */
let catalog: StreamCatalog = defaultCatalog;

const syncEngine = (e: Engine, settings: SettingsInput = {}): Promise<SyncResult> =>
  syncOnce(
    sim,
    { credentials, warehouse: e.target, ...(e.schema ? { schema: e.schema } : {}), ...settings },
    { catalog },
  );

const dumpEngine = (e: Engine): ReturnType<typeof dumpWarehouse> =>
  dumpWarehouse(e.target, { catalog, ...(e.schema ? { schema: e.schema } : {}) });

async function query(e: Engine, sql: string): Promise<Record<string, CellValue>[]> {
  const warehouse = await openWarehouse(e.target, { schema: e.schema, logger: silentLogger });
  try {
    return await warehouse.query(sql);
  } finally {
    await warehouse.close();
  }
}

async function tableNames(e: Engine): Promise<string[]> {
  const where = e.schema ? `table_schema = '${e.schema}'` : `table_schema = 'main'`;
  const rows = await query(e, `SELECT table_name FROM information_schema.tables WHERE ${where}`);
  return rows.map((r) => String(r.table_name));
}

const streamInfo = (result: SyncResult): SyncResult['streams'][number] | undefined =>
  result.streams.find((s) => s.stream === 'grant_cycles');

/** A record's value at `key`, for building expectations. */
const at = (record: JsonObject, key: string): JsonValue => record[key] ?? null;

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 23 });
  const siteUsers = sim.control.collection('users').map(({ role: _role, ...ref }) => ref);
  records = cycleRecords(siteUsers, sim.control.collection('programs'));
  served = [...records];
  sim.control.addList(path, served);
  dir = await tempDir();
  pgTarget = await postgresSchema();
  credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  engines = [
    { name: 'duckdb', target: join(dir.path, 'w.duckdb') },
    { name: 'postgres', target: pgTarget.url, schema: pgTarget.schema },
  ];
  // Warehouses that exist before the endpoint is added, as a user's would: the new table must join them.
  for (const e of engines) {
    expect((await syncEngine(e)).status, e.name).toBe('succeeded');
    expect(await tableNames(e), e.name).not.toContain('grant_cycles');
  }
  // The line a user adds to src/streams/registry.ts: from here on the syncs know the endpoint.
  catalog = withGrantCycles;
  rawDir = join(dir.path, 'raw');
  for (const e of engines) {
    const result = await syncEngine(e, e.schema ? {} : { landRaw: true, rawDir });
    if (!e.schema) landedRun = result.runId;
    expect(result.status, e.name).toBe('succeeded');
    expect(streamInfo(result), e.name).toMatchObject({ records: records.length, complete: true, quarantined: 0 });
  }
});
afterAll(async () => {
  await sim?.close();
  await pgTarget?.drop();
  await dir?.remove();
});

describe('an endpoint declared in a test and added to its catalog', () => {
  it('has its table with the declared columns and types on both engines', async () => {
    const declared = grantCycles.table.columns.map((c) => ({ name: c.name, type: c.type }));
    const duck = await query(
      engines[0]!,
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'grant_cycles' ORDER BY ordinal_position`,
    );
    const pg = await query(
      engines[1]!,
      `SELECT column_name, CASE WHEN data_type = 'numeric' THEN 'numeric(' || numeric_precision || ',' || numeric_scale || ')' ELSE data_type END AS data_type
       FROM information_schema.columns WHERE table_schema = '${pgTarget.schema}' AND table_name = 'grant_cycles' ORDER BY ordinal_position`,
    );
    for (const [rows, dialect] of [
      [duck, 'duckdb'],
      [pg, 'postgres'],
    ] as const) {
      const types = new Map(rows.map((r) => [r.column_name, r.data_type]));
      for (const c of declared) expect(types.get(c.name), `${dialect} ${c.name}`).toBe(sqlTypes[c.type]![dialect]);
      // The declared columns first, in order, then the metadata every entity row carries.
      expect(rows.slice(0, declared.length).map((r) => r.column_name)).toEqual(declared.map((c) => c.name));
      expect(rows.map((r) => r.column_name)).toContain('_raw');
      expect(rows.map((r) => r.column_name)).toContain('_deleted_at');
    }
    // And the view of its current rows, as every table with soft deletes has.
    for (const e of engines) expect(await tableNames(e), e.name).toContain('grant_cycles_current');
  });

  it('holds every record as a row with its typed values, references and nested source', async () => {
    const expected = records.map((r) => ({
      id: r.id,
      name: r.name,
      amount: expectedMoney(at(r, 'amount')),
      opens_at: expectedTimestamp(at(r, 'opens_at')),
      owner_id: (r.owner as JsonObject).id,
      program_id: (r.program as JsonObject).id,
      region_name: (r.region as JsonObject).name,
      raw: r,
      deleted: false,
    }));
    for (const e of engines) {
      const rows = await query(
        e,
        'SELECT id, name, amount, opens_at, owner_id, program_id, region_name, _raw AS raw, _deleted_at IS NOT NULL AS deleted FROM grant_cycles ORDER BY id',
      );
      expect(
        rows.map((r) => ({ ...r, raw: JSON.parse(String(r.raw)) as unknown })),
        e.name,
      ).toEqual(expected);
    }
  });

  it('fills the users and programs dimensions with the rows its records reference', async () => {
    const owners = new Map(records.map((r) => [at(r.owner as JsonObject, 'id'), r.owner as JsonObject]));
    const programs = new Map(records.map((r) => [at(r.program as JsonObject, 'id'), r.program as JsonObject]));
    const ids = (m: Map<JsonValue, JsonObject>): string => [...m.keys()].join(', ');
    for (const e of engines) {
      const users = await query(e, `SELECT id, first_name, last_name, email FROM users WHERE id IN (${ids(owners)})`);
      expect(
        users.sort((a, b) => Number(a.id) - Number(b.id)),
        e.name,
      ).toEqual([...owners.values()].sort((a, b) => Number(a.id) - Number(b.id)));
      const progs = await query(e, `SELECT id, name FROM programs WHERE id IN (${ids(programs)})`);
      expect(
        progs.sort((a, b) => Number(a.id) - Number(b.id)),
        e.name,
      ).toEqual([...programs.values()].sort((a, b) => Number(a.id) - Number(b.id)));
    }
    // The owners only this endpoint names came from no other stream.
    const onlyHere = newOwners.map((u) => u.id).join(', ');
    const raw = await query(engines[0]!, `SELECT _raw FROM users WHERE id IN (${onlyHere}) ORDER BY id`);
    expect(raw.map((r) => JSON.parse(String(r._raw)) as unknown)).toEqual(newOwners);
  });

  it('gives equal dumps on both engines', async () => {
    const duck = await dumpEngine(engines[0]!);
    const pg = await dumpEngine(engines[1]!);
    expect(duck.grant_cycles?.rows).toBe(records.length);
    expect(summarize(pg)).toEqual(summarize(duck));
    expect(pg.grant_cycles!.content).toEqual(duck.grant_cycles!.content);
  });

  it('records its unmapped field in the drift catalog', async () => {
    const holders = records.filter((r) => unmappedField in r).length;
    for (const e of engines) {
      const rows = await query(
        e,
        `SELECT path, kind, records_seen FROM _grantflow_unknown_fields WHERE stream = 'grant_cycles' ORDER BY path`,
      );
      // Only it: the nested source `region.name` and the references are known fields.
      expect(rows, e.name).toEqual([{ path: unmappedField, kind: 'unmapped', records_seen: holders }]);
    }
  });

  it('is covered by the generic data tests, which pass on both engines', async () => {
    const own = [
      'unique:grant_cycles(id)',
      'not_null:grant_cycles.id',
      'raw_present:grant_cycles',
      'relationship:grant_cycles.owner_id->users.id',
      'relationship:grant_cycles.program_id->programs.id',
    ];
    for (const e of engines) {
      const warehouse = await openWarehouse(e.target, { schema: e.schema, logger: silentLogger });
      try {
        const results = await runDataTests(warehouse, { tables: catalog.tables });
        const mine = results.filter((r) => r.name.includes('grant_cycles'));
        expect(mine.map((r) => r.name).sort(), e.name).toEqual([...own].sort());
        expect(
          mine.filter((r) => r.status !== 'pass').map((r) => `${r.name}: ${r.message ?? r.failing}`),
          e.name,
        ).toEqual([]);
        const failing = results.filter((r) => r.severity === 'error' && r.status !== 'pass');
        expect(
          failing.map((r) => r.name),
          e.name,
        ).toEqual([]);
      } finally {
        await warehouse.close();
      }
    }
  });

  it('is listed in the data dictionary with every declared column', () => {
    const dictionary = renderDataDictionary(catalog.tables);
    expect(dictionary).toContain('- [grant_cycles](#grant_cycles) (entity)');
    const start = dictionary.indexOf('### grant_cycles\n');
    expect(start).toBeGreaterThan(-1);
    const section = dictionary.slice(start, dictionary.indexOf('\n### ', start)).split('\n');
    expect(section).toContain(grantCycles.table.description);
    for (const c of grantCycles.table.columns)
      expect(
        section.some((l) => l.startsWith(`| \`${c.name}\` |`) && l.endsWith(`| ${c.description} |`)),
        c.name,
      ).toBe(true);
  });

  it('replays from its landed pages, normalised in the worker thread or not, as the sync loaded them', async () => {
    const synced = await dumpEngine(engines[0]!);
    for (const normaliseInWorker of [true, false]) {
      const target = join(dir.path, `replayed-${normaliseInWorker ? 'worker' : 'main'}.duckdb`);
      const warehouse = await openWarehouse(target, { logger: silentLogger });
      try {
        const infos = await runReplay({
          warehouse,
          rawDir,
          runId: landedRun,
          siteTimeZone: 'UTC',
          normaliseInWorker,
          catalog,
        });
        expect(infos.find((i) => i.stream === 'grant_cycles')).toMatchObject({ records: records.length });
      } finally {
        await warehouse.close();
      }
      // That run skipped the children of unchanged parents: only what it read whole replays to the same tables.
      expect((await dumpWarehouse(target, { catalog })).grant_cycles!.content).toEqual(synced.grant_cycles!.content);
    }
  });

  it('changes nothing on a second sync', async () => {
    for (const e of engines) {
      const before = await dumpEngine(e);
      const result = await syncEngine(e);
      expect(result.status, e.name).toBe('succeeded');
      expect(streamInfo(result), e.name).toMatchObject({ records: records.length, complete: true, deleted: 0 });
      expect(summarize(await dumpEngine(e)), e.name).toEqual(summarize(before));
      // Its state is kept like every stream's: the run that last read it whole.
      const [state] = await query(e, `SELECT state FROM _grantflow_streams WHERE stream = 'grant_cycles'`);
      expect(JSON.parse(String(state?.state)), e.name).toMatchObject({
        lastCompleteRunId: result.runId,
        records: records.length,
      });
    }
  });

  it('soft-deletes a record the route no longer lists on the next complete scan', async () => {
    const gone = records[11]!;
    served.splice(served.indexOf(gone), 1);
    for (const e of engines) {
      const result = await syncEngine(e);
      expect(result.status, e.name).toBe('succeeded');
      expect(streamInfo(result), e.name).toMatchObject({ records: records.length - 1, complete: true, deleted: 1 });
      const deleted = await query(e, 'SELECT id FROM grant_cycles WHERE _deleted_at IS NOT NULL');
      expect(deleted, e.name).toEqual([{ id: gone.id }]);
      const live = await query(e, 'SELECT count(*) AS n FROM grant_cycles WHERE _deleted_at IS NULL');
      expect(Number(live[0]!.n), e.name).toBe(records.length - 1);
    }
    const duck = await dumpEngine(engines[0]!);
    expect(summarize(await dumpEngine(engines[1]!))).toEqual(summarize(duck));
  });
});
