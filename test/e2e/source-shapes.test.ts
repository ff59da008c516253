/**
 * Shapes the spec leaves open, served by the simulated site and synced into a real DuckDB file and a real Postgres
 * schema: each value is either typed or NULL (kept in `_raw`), and no stream fails because of one of them.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runReplay } from '../../src/pipeline/replay.ts';
import type { JsonObject } from '../../src/util/json.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { SyncResult } from '../../src/pipeline/sync.ts';
import { formatSummary } from '../../src/pipeline/summary.ts';
import { postgresSchema, siteWithWarehouse, syncWithoutModels } from '../support/harness.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** Syncs `sim` into a fresh DuckDB file and a fresh Postgres schema; runs `check` on each warehouse. */
async function syncBoth(
  sim: SimulatorHandle,
  credentials: string,
  warehouse: string,
  check: (query: (sql: string) => Promise<Record<string, unknown>[]>) => Promise<void>,
): Promise<SyncResult[]> {
  const results: SyncResult[] = [];
  const pg = await postgresSchema();
  cleanup.push(pg.drop);
  for (const [target, schema] of [
    [warehouse, undefined],
    [pg.url, pg.schema],
  ] as const) {
    const result = await syncWithoutModels(sim, { credentials, warehouse: target, ...(schema ? { schema } : {}) });
    results.push(result);
    expect(
      result.streams.filter((s) => s.status !== 'ok').map((s) => `${s.stream}: ${s.reason}`),
      target,
    ).toEqual([]);
    const w = await openWarehouse(target, { ...(schema ? { schema } : {}), logger: silentLogger });
    try {
      await check((sql) => w.query(sql));
    } finally {
      await w.close();
    }
  }
  return results;
}

describe('task responses', () => {
  it('integers past 2^53 are not option ids: the stream loads, the response stays in response_json', async () => {
    const { sim, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 21 });
    cleanup.push(remove);
    const app = sim.control.data.applications.rows[0]!;
    const task = sim.control.data.children(Number(app.id))!.tasks[0] as JsonObject;
    // Served as they are: the children are the simulator's own data.
    task.data = { huge: 1e20, rounded: 2 ** 53 + 2, list: [1, 1e20], other: { value: 1e20, other: 'x' }, ok: 7 };
    await syncBoth(sim, credentials, warehouse, async (query) => {
      const rows = await query(
        `SELECT question_id, number_value, option_id, option_ids, other_text FROM task_responses ` +
          `WHERE application_id = ${Number(app.id)} AND task_id = ${Number(task.id)} ORDER BY question_id`,
      );
      expect(rows).toEqual([
        { question_id: 'huge', number_value: 1e20, option_id: null, option_ids: null, other_text: null },
        { question_id: 'list', number_value: null, option_id: null, option_ids: null, other_text: null },
        { question_id: 'ok', number_value: 7, option_id: 7, option_ids: null, other_text: null },
        { question_id: 'other', number_value: null, option_id: null, option_ids: null, other_text: 'x' },
        { question_id: 'rounded', number_value: 2 ** 53 + 2, option_id: null, option_ids: null, other_text: null },
      ]);
    });
  }, 120_000);
});

describe('list items that are not JSON objects', () => {
  it('are quarantined one by one, as sent, and counted; the rest of the page loads and the run succeeds', async () => {
    const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 22 });
    cleanup.push(remove);
    const fields = sim.control.data.customFields.rows as unknown as (JsonObject | null | number)[];
    const served = fields.length;
    // Served as they are: the collection is the simulator's own data.
    fields.push(null, 42);
    const results = await syncBoth(sim, credentials, warehouse, async (query) => {
      const quarantined = await query(
        `SELECT payload, reason FROM _grantflow_quarantine WHERE stream = 'custom_fields' ORDER BY CAST(payload AS TEXT)`,
      );
      expect(quarantined.map((q) => q.payload)).toEqual(['42', 'null']);
      for (const q of quarantined) expect(q.reason).toMatch(/not a JSON object/);
      const [loaded] = await query(`SELECT count(*) AS n FROM custom_fields WHERE NOT _ref_only`);
      expect(Number(loaded!.n)).toBe(served);
    });
    for (const result of results) {
      expect(result.status).toBe('succeeded');
      expect(result.streams.find((s) => s.stream === 'custom_fields')?.quarantined).toBe(2);
      expect(formatSummary(result)).toMatch(/^ {2}custom_fields +ok +\d+ +\d+ +0 +2( |$)/m);
    }

    // A replay of the landed pages quarantines them the same, through its normalising worker.
    const rawDir = join(dir, 'raw');
    const landed = await syncWithoutModels(sim, {
      credentials,
      warehouse: join(dir, 'landed.duckdb'),
      landRaw: true,
      rawDir,
    });
    const replayed = await openWarehouse(join(dir, 'replayed.duckdb'), { logger: silentLogger });
    try {
      const infos = await runReplay({ warehouse: replayed, rawDir, runId: landed.runId, siteTimeZone: 'UTC' });
      expect(infos.find((i) => i.stream === 'custom_fields')?.quarantined).toBe(2);
      const payloads = await replayed.query(`SELECT payload FROM _grantflow_quarantine ORDER BY CAST(payload AS TEXT)`);
      expect(payloads.map((q) => q.payload)).toEqual(['42', 'null']);
    } finally {
      await replayed.close();
    }
  }, 120_000);
});

describe('a list item that is not a JSON object in place of a record', () => {
  it('deletes nothing: the item may stand for any held record (sync and replay alike)', async () => {
    const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 23 });
    cleanup.push(remove);
    const rawDir = join(dir, 'raw');
    const replayTarget = join(dir, 'replayed.duckdb');
    await syncWithoutModels(sim, { credentials, warehouse });
    await syncWithoutModels(sim, { credentials, warehouse: replayTarget });
    const fields = sim.control.data.customFields.rows as unknown as (JsonObject | null)[];
    const replaced = Number((fields[0] as JsonObject).id);
    // Served as they are: the collection is the simulator's own data.
    fields[0] = null;
    const result = await syncWithoutModels(sim, { credentials, warehouse, landRaw: true, rawDir });
    const stream = result.streams.find((s) => s.stream === 'custom_fields');
    expect(stream?.quarantined).toBe(1);
    expect(stream?.deleted ?? 0).toBe(0);
    const replayed = await openWarehouse(replayTarget, { logger: silentLogger });
    const w = await openWarehouse(warehouse, { logger: silentLogger });
    try {
      // The replay starts from rows that hold the replaced record, so a deletion it inferred would show.
      await runReplay({ warehouse: replayed, rawDir, runId: result.runId, siteTimeZone: 'UTC' });
      for (const target of [w, replayed]) {
        const rows = await target.query(`SELECT _deleted_at FROM custom_fields WHERE id = ${replaced}`);
        expect(rows).toEqual([{ _deleted_at: null }]);
      }
    } finally {
      await w.close();
      await replayed.close();
    }
  }, 120_000);
});

describe('nested values of a shape the mapping cannot use', () => {
  it('are counted as untyped in the summary and kept in _raw', async () => {
    const { sim, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 23 });
    cleanup.push(remove);
    const fund = sim.control.data.funds.rows[0]!;
    const award = sim.control.data.awards.rows.find((a) => Array.isArray(a.payments) && a.payments.length > 0)!;
    // Served as they are: the collections are the simulator's own data.
    fund.fund_folder = 'General'; // a name where {id, name} is expected
    fund.custom_fields = { id: 1, value: 'x' }; // an object where an array is expected
    award.payments = (award.payments as JsonObject[]).map((p) => p.id!); // ids where {id, amount, status} are expected
    const results = await syncBoth(sim, credentials, warehouse, async (query) => {
      const [f] = await query(`SELECT fund_folder_id, fund_folder_name, _raw FROM funds WHERE id = ${Number(fund.id)}`);
      expect(f).toMatchObject({ fund_folder_id: null, fund_folder_name: null });
      expect(JSON.parse(String(f!._raw))).toMatchObject({ fund_folder: 'General' });
    });
    for (const result of results) {
      expect(result.streams.find((s) => s.stream === 'funds')?.untyped).toBe(2);
      expect(result.streams.find((s) => s.stream === 'awards')?.untyped).toBe((award.payments as number[]).length);
      expect(formatSummary(result)).toMatch(/source values could not be typed/);
    }
  }, 120_000);
});

describe('ids sent as text', () => {
  it('load under their integer id, and the children of such a parent are read too', async () => {
    const { sim, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 24 });
    cleanup.push(remove);
    const app = sim.control.data.applications.rows[0]!;
    const org = sim.control.data.organizations.rows[0]!;
    const appId = Number(app.id);
    const orgId = Number(org.id);
    // Served as they are: the collections are the simulator's own data.
    app.id = String(appId);
    org.id = ` ${orgId} `;
    const expected = {
      tasks: sim.control.collection('application_tasks', { application: appId }).length,
      stages: sim.control.collection('application_stages', { application: appId }).length,
      notes: sim.control.collection('application_notes', { application: appId }).length,
      members: sim.control.collection('organization_members', { organization: orgId }).length,
      teams: sim.control.collection('organization_teams', { organization: orgId }).length,
    };
    expect(expected.tasks + expected.members).toBeGreaterThan(0);
    await syncBoth(sim, credentials, warehouse, async (query) => {
      const count = async (table: string, column: string, id: number): Promise<number> =>
        Number((await query(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ${id}`))[0]!.n);
      expect(await count('applications', 'id', appId)).toBe(1);
      expect(await count('organizations', 'id', orgId)).toBe(1);
      expect({
        tasks: await count('application_tasks', 'application_id', appId),
        stages: await count('application_stages', 'application_id', appId),
        notes: await count('application_notes', 'application_id', appId),
        members: await count('organization_members', 'organization_id', orgId),
        teams: await count('teams', 'organization_id', orgId),
      }).toEqual(expected);
    });
  }, 120_000);
});

describe('an id beyond 2^53, sent as text', () => {
  it('loads exactly, and the summary says its children were not read (a request cannot name it)', async () => {
    const { sim, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 26 });
    cleanup.push(remove);
    const app = sim.control.data.applications.rows[0]!;
    const huge = '9007199254740993';
    app.id = huge; // served as it is: the collection is the simulator's own data
    const results = await syncBoth(sim, credentials, warehouse, async (query) => {
      const rows = await query(`SELECT CAST(id AS TEXT) AS id FROM applications WHERE id = ${huge}`);
      expect(rows).toEqual([{ id: huge }]);
    });
    for (const result of results) {
      expect(result.streams.find((s) => s.stream === 'applications')?.parentsUnread).toBe(1);
      expect(formatSummary(result)).toMatch(/children of 1 records not read \(id beyond 2\^53\)/);
    }
  }, 120_000);
});

describe('ids that are neither keys nor references', () => {
  it('are NULL and counted when they are not integers; the record itself loads', async () => {
    const { sim, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 25 });
    cleanup.push(remove);
    const entry = sim.control.data.log.rows[0]!;
    const fund = sim.control.data.funds.rows[0]!;
    // Served as they are: the collections are the simulator's own data.
    entry.object_id = 'me';
    entry.parent_id = 1e20; // its digits are lost when read
    fund.site_fund_id = 'F-7';
    const results = await syncBoth(sim, credentials, warehouse, async (query) => {
      const [log] = await query(`SELECT object_id, parent_id, _raw FROM api_log WHERE id = ${Number(entry.id)}`);
      expect(log).toMatchObject({ object_id: null, parent_id: null });
      expect(JSON.parse(String(log!._raw))).toMatchObject({ object_id: 'me' });
      const [f] = await query(`SELECT site_fund_id, name FROM funds WHERE id = ${Number(fund.id)}`);
      expect(f).toEqual({ site_fund_id: null, name: fund.name });
    });
    for (const result of results) {
      const info = (stream: string) => result.streams.find((s) => s.stream === stream);
      expect([info('api_log')?.quarantined, info('api_log')?.untyped]).toEqual([0, 2]);
      expect([info('funds')?.quarantined, info('funds')?.untyped]).toEqual([0, 1]);
    }
  }, 120_000);
});
