/**
 * Issue 3 acceptance: a full sync lands every record of every stream exactly once, compared with the simulator's
 * own data; lists are paginated (small per_page cap) so `next` walks are exercised.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { JsonObject } from '../../src/util/json.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { startSite, syncOnce, tempDir, writeCredentials } from '../support/harness.ts';
import { servedRecords } from '../../src/simulator/stream-serving.ts';
import { builtinStreamNames, streamByName, streamCatalog, type StreamName } from '../../src/streams/registry.ts';

const ref = (r: JsonObject, field: string): string => String((r[field] as JsonObject | null)?.id);

interface Expectation {
  /** The key of a record as the site serves it (`parentId`: its fan-out parent's id). */
  simKey: (r: JsonObject, parentId: number | undefined) => string;
  /** The same key in the stream's table. */
  columns: readonly string[];
  where?: string;
}

/**
 * Per stream of the registry (the compiler asks for each one), how its records and its table's rows are compared.
 * report_downloads serves a file per generated report, not records: its loads are compared with the site's files in
 * report-downloads.test.ts.
 */
const expectations: { readonly [S in StreamName]: Expectation | null } = {
  programs: { simKey: (r) => `${r.id}`, columns: ['id'], where: 'NOT _ref_only' },
  applications: { simKey: (r) => `${r.id}`, columns: ['id'] },
  application_stages: {
    simKey: (r, parent) => `${parent}/${ref(r, 'stage')}`,
    columns: ['application_id', 'stage_id'],
  },
  application_tasks: { simKey: (r, parent) => `${parent}/${r.id}`, columns: ['application_id', 'task_id'] },
  application_notes: { simKey: (r) => `${r.id}`, columns: ['id'] },
  assignments: {
    simKey: (r) => `${ref(r, 'application')}/${ref(r, 'reviewer')}/${ref(r, 'stage')}`,
    columns: ['application_id', 'reviewer_id', 'stage_id'],
  },
  team_assignments: {
    simKey: (r) => `${ref(r, 'application')}/${ref(r, 'team')}/${ref(r, 'stage')}`,
    columns: ['application_id', 'team_id', 'stage_id'],
  },
  custom_fields: { simKey: (r) => `${r.id}`, columns: ['id'], where: 'NOT _ref_only' },
  financial_transactions: { simKey: (r) => `${r.id}`, columns: ['id'] },
  funds: { simKey: (r) => `${r.id}`, columns: ['id'], where: 'NOT _ref_only' },
  budgets: { simKey: (r) => `${r.id}`, columns: ['id'] },
  awards: { simKey: (r) => `${r.id}`, columns: ['id'] },
  payments: { simKey: (r) => `${r.id}`, columns: ['id'], where: 'NOT _ref_only' },
  organizations: { simKey: (r) => `${r.id}`, columns: ['id'], where: 'NOT _ref_only' },
  organization_members: { simKey: (r, parent) => `${parent}/${r.id}`, columns: ['organization_id', 'user_id'] },
  organization_teams: { simKey: (r) => `${r.id}`, columns: ['id'], where: 'NOT _ref_only' },
  eligibility: { simKey: (_r, parent) => `${parent}`, columns: ['organization_id'] },
  reports: { simKey: (r) => `${r.id}`, columns: ['id'] },
  report_downloads: null,
  activity: { simKey: (r) => `${r.id}`, columns: ['id'] },
  api_log: { simKey: (r) => `${r.id}`, columns: ['id'] },
};

/** Each stream with records to compare, with its own table (the one its records fill, one row each). */
const compared = builtinStreamNames.flatMap((name) => {
  const e = expectations[name];
  return e === null ? [] : [{ name, table: streamByName(name)!.table.name, ...e }];
});

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let warehousePath: string;

beforeAll(async () => {
  // A per_page cap of 7 makes every list of the tiny site span several pages.
  sim = await startSite({ scale: 'tiny', seed: 8, perPageMax: 7 });
  dir = await tempDir();
  warehousePath = join(dir.path, 'w.duckdb');
  const credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  const result = await syncOnce(sim, { credentials, warehouse: warehousePath, perPage: 100 });
  expect(result.status).toBe('succeeded');
  expect(result.streams.every((s) => s.status === 'ok')).toBe(true);
});
afterAll(async () => {
  await sim.close();
  await dir.remove();
});

describe('a full sync', () => {
  it.each(compared.map((e) => [e.name, e] as const))('lands every record of %s exactly once', async (_name, e) => {
    const served = servedRecords(sim.control.data, e.name, sim.control.config);
    const expected = served.map(({ record, parentId }) => e.simKey(record, parentId)).sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(new Set(expected).size).toBe(expected.length);
    const warehouse = await openWarehouse(warehousePath, { logger: silentLogger });
    try {
      const rows = await warehouse.query(
        `SELECT ${e.columns.join(', ')} FROM ${e.table} WHERE _deleted_at IS NULL${e.where ? ` AND ${e.where}` : ''}`,
      );
      const actual = rows.map((r) => e.columns.map((c) => String(r[c])).join('/')).sort();
      expect(actual).toEqual(expected);
    } finally {
      await warehouse.close();
    }
  });

  it('asked for each application child list exactly once and paginated with the capped page size', () => {
    const counts = sim.control.counts();
    const childLists = streamCatalog.filter((s) => s.parent?.stream === 'applications');
    expect(childLists.length).toBeGreaterThan(0);
    for (const app of sim.control.collection('applications')) {
      for (const child of childLists) {
        const path = child.path.replace('{parent}', String(app.id));
        expect(counts.byPath[`GET ${path}`], `${child.name} of ${String(app.id)}`).toBe(1);
      }
    }
    const apps = sim.control.collection('applications').length;
    // Plus the page-size probe of the first sync into a warehouse (per_page=500, which the cap of 7 answers).
    expect(counts.byTemplate['GET /api/applications/']).toBe(Math.ceil(apps / 7) + 1);
  });

  it('keeps the source JSON of every record, hostile values byte for byte', async () => {
    const warehouse = await openWarehouse(warehousePath, { logger: silentLogger });
    try {
      const notes = await warehouse.query('SELECT id, content, _raw FROM application_notes');
      const byId = new Map(sim.control.collection('application_notes').map((n) => [Number(n.id), n]));
      let longest = 0;
      for (const n of notes) {
        const source = byId.get(Number(n.id))!;
        expect(n.content).toBe(source.content);
        const { application_id: _drop, ...record } = source;
        expect(JSON.parse(String(n._raw))).toEqual(record);
        longest = Math.max(longest, String(n.content).length);
      }
      expect(longest).toBeGreaterThan(50_000);
      const titles = await warehouse.query('SELECT id, title FROM applications');
      const simTitles = new Map(sim.control.collection('applications').map((a) => [Number(a.id), a.title]));
      for (const t of titles) expect(t.title).toBe(simTitles.get(Number(t.id)));
      const programs = await warehouse.query('SELECT id, name FROM programs WHERE NOT _ref_only');
      const simPrograms = new Map(sim.control.collection('programs').map((p) => [Number(p.id), p.name]));
      for (const p of programs) expect(p.name).toBe(simPrograms.get(Number(p.id)));
      // The compared values include the awkward ones real data has.
      const compared = [
        ...titles.map((t) => t.title),
        ...programs.map((p) => p.name),
        ...notes.map((n) => n.content),
      ].map(String);
      expect(compared.some((v) => v.includes('DROP TABLE'))).toBe(true);
      expect(compared.some((v) => /\p{Extended_Pictographic}/u.test(v))).toBe(true);
      expect(compared.some((v) => v.includes("'") && v.includes('"'))).toBe(true);
    } finally {
      await warehouse.close();
    }
  });
});
