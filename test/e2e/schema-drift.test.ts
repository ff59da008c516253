/**
 * Issue 23: with the simulator's drift on, references found anywhere feed their dimensions (users holds every user
 * the site mentions), the drift catalog lists exactly the unlisted paths the simulator added, and promotion of three
 * of them fills typed columns on DuckDB and Postgres alike, idempotently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { SyncResult } from '../../src/pipeline/sync.ts';
import { promotionsOf, migrateWithPromotions } from '../../src/pipeline/promote-step.ts';
import type { PromotionSetting } from '../../src/normalize/promotions.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import type { Warehouse } from '../../src/warehouse/types.ts';
import { silentLogger } from '../../src/util/logger.ts';
import type { JsonObject, JsonValue } from '../../src/util/json.ts';
import { driftLines } from '../../src/cli/commands/status.ts';
import { postgresSchema, startSite, syncOnce, tempDir, writeCredentials } from '../support/harness.ts';
import { recordStreamNames, routeTemplate, servedRecords } from '../../src/simulator/stream-serving.ts';
import { streamByName, type StreamName } from '../../src/streams/registry.ts';

/** The route template of each stream the drift can reach (every one the site serves as records), by the registry. */
const streamOf: Readonly<Record<string, StreamName>> = Object.fromEntries(
  recordStreamNames.map((name) => [routeTemplate(streamByName(name)!.path), name]),
);

const promote: PromotionSetting[] = [
  { stream: 'applications', path: 'extra.score', column: 'drift_score', type: 'integer' },
  { stream: 'applications', path: 'extra.reviewed_by', column: 'reviewed_by', type: 'reference' },
  { stream: 'programs', path: 'extra.label', column: 'drift_label', type: 'text' },
];

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let pg: Awaited<ReturnType<typeof postgresSchema>>;
let credentials: string;
const targets: { name: string; warehouse: string; schema?: string; first?: SyncResult }[] = [];

const open = (t: (typeof targets)[number]): Promise<Warehouse> =>
  openWarehouse(t.warehouse, { schema: t.schema, logger: silentLogger });

async function withWarehouse<T>(t: (typeof targets)[number], fn: (w: Warehouse) => Promise<T>): Promise<T> {
  const w = await open(t);
  try {
    return await fn(w);
  } finally {
    await w.close();
  }
}

const sync = (t: (typeof targets)[number], extra: { promote?: PromotionSetting[] } = {}): Promise<SyncResult> =>
  syncOnce(sim, { credentials, warehouse: t.warehouse, schema: t.schema, models: false, ...extra });

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 23, drift: true });
  dir = await tempDir();
  pg = await postgresSchema();
  credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  targets.push({ name: 'duckdb', warehouse: join(dir.path, 'w.duckdb') });
  targets.push({ name: 'postgres', warehouse: pg.url, schema: pg.schema });
  for (const t of targets) {
    t.first = await sync(t);
    expect(t.first.status).toBe('succeeded');
  }
});
afterAll(async () => {
  await sim.close();
  await pg.drop();
  await dir.remove();
});

/** User ids of every UserRef-shaped object anywhere in `v` (an id with names and an email). */
function userIds(v: JsonValue | undefined, into: Set<number>): void {
  if (typeof v !== 'object' || v === null) return;
  if (Array.isArray(v)) return v.forEach((x) => userIds(x, into));
  if (typeof v.id === 'number' && typeof v.email === 'string' && 'first_name' in v) into.add(v.id);
  for (const x of Object.values(v)) userIds(x, into);
}

describe('references wherever they are', () => {
  it('users holds every user the site mentions, the users only drift mentions included', async () => {
    const expected = new Set<number>(sim.control.driftReport().userIds);
    for (const stream of Object.values(streamOf))
      userIds(
        servedRecords(sim.control.data, stream, sim.control.config).map(({ record }) => record),
        expected,
      );
    expect(sim.control.driftReport().driftOnlyUserIds.length).toBeGreaterThan(0);
    for (const t of targets) {
      const rows = await withWarehouse(t, (w) => w.query(`SELECT id FROM ${w.qualify('users')}`));
      const held = new Set(rows.map((r) => Number(r.id)));
      expect(
        [...expected].filter((id) => !held.has(id)),
        t.name,
      ).toEqual([]);
      expect(
        [...held].filter((id) => !expected.has(id)),
        t.name,
      ).toEqual([]);
    }
  });
});

describe('the drift catalog', () => {
  it('lists exactly the unlisted paths the simulator added, per stream', async () => {
    const report = sim.control.driftReport();
    const expected = Object.entries(report.paths)
      .filter(([template]) => template in streamOf)
      .flatMap(([template, paths]) => paths.map((p) => `${streamOf[template]!} ${p}`))
      .sort();
    expect(expected.length).toBeGreaterThan(50);
    for (const t of targets) {
      const rows = await withWarehouse(t, (w) => w.listUnknownFields());
      expect(rows.map((r) => `${r.stream} ${r.path}`).sort(), t.name).toEqual(expected);
      expect(new Set(rows.map((r) => r.kind)), t.name).toEqual(new Set(['unmapped']));
      expect(t.first!.drift?.newPaths, t.name).toBe(expected.length);
      const score = rows.find((r) => r.stream === 'applications' && r.path === 'extra.score')!;
      expect(score.json_types).toBe('number');
      expect(score.records_seen).toBe(sim.control.collection('applications').length);
    }
  });

  it('finds nothing new on the next run, and says so', async () => {
    const t = targets[0]!;
    const again = await sync(t);
    expect(again.drift).toMatchObject({ newPaths: 0 });
    expect(again.drift!.unmapped).toBeGreaterThan(0);
    const rows = await withWarehouse(t, (w) => w.listUnknownFields());
    // Kept from the first run; seen again only where records were read again (applications, not unchanged children).
    expect(rows.every((r) => r.first_run_id === t.first!.runId)).toBe(true);
    const seenAgain = rows.filter((r) => r.last_run_id === again.runId).map((r) => r.stream);
    expect(seenAgain).toContain('applications');
    // `grantflow status` lists them newest first: those this run saw again before the others.
    const lines = await withWarehouse(t, driftLines);
    expect(lines[1]).toContain(`${rows.length} in _grantflow_unknown_fields`);
    const listed = lines.slice(2).filter((l) => l.includes('last run'));
    expect(listed.length).toBe(Math.min(rows.length, 50));
    expect(listed[0]).toContain(again.runId);
    const seenAt = rows.map((r) => Date.parse(r.last_seen_at));
    expect(seenAt).toEqual([...seenAt].sort((x, y) => y - x));
    expect(rows.findIndex((r) => r.last_run_id !== again.runId)).toBeGreaterThan(
      rows.findLastIndex((r) => r.last_run_id === again.runId),
    );
  });
});

describe('promotion without code', () => {
  /** The promoted columns of both tables, in a stable order, as text. */
  async function promoted(w: Warehouse): Promise<string[][]> {
    const apps = await w.query(
      `SELECT id, drift_score, reviewed_by_id, _raw FROM ${w.qualify('applications')} ORDER BY id`,
    );
    const programs = await w.query(`SELECT id, drift_label, _raw FROM ${w.qualify('programs')} ORDER BY id`);
    return [
      apps.map((r) => `${String(r.id)}:${String(r.drift_score)}:${String(r.reviewed_by_id)}`),
      programs.map((r) => `${String(r.id)}:${String(r.drift_label)}`),
    ];
  }

  it('fills the rows held from _raw, the same on both engines, and again changes nothing', async () => {
    const plan = promotionsOf({ promote });
    const results: string[][][] = [];
    for (const t of targets) {
      await withWarehouse(t, async (w) => {
        await migrateWithPromotions(w, plan);
        const first = await promoted(w);
        await migrateWithPromotions(w, plan);
        expect(await promoted(w), t.name).toEqual(first);
        // Each value is what the record's own JSON holds there.
        const apps = await w.query(`SELECT drift_score, reviewed_by_id, _raw FROM ${w.qualify('applications')}`);
        expect(apps.length).toBeGreaterThan(0);
        for (const a of apps) {
          const extra = (JSON.parse(String(a._raw)) as JsonObject).extra as JsonObject;
          expect(Number(a.drift_score)).toBe(extra.score);
          expect(Number(a.reviewed_by_id)).toBe((extra.reviewed_by as JsonObject).id);
        }
        const programs = await w.query(`SELECT drift_label, _raw FROM ${w.qualify('programs')}`);
        for (const p of programs)
          expect(p.drift_label).toBe(((JSON.parse(String(p._raw)) as JsonObject).extra as JsonObject).label);
        // The reference resolves in its dimension.
        const [dangling] = await w.query(
          `SELECT count(*) AS n FROM ${w.qualify('applications')} a WHERE a.reviewed_by_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${w.qualify('users')} u WHERE u.id = a.reviewed_by_id)`,
        );
        expect(Number(dangling!.n)).toBe(0);
        results.push(first);
      });
    }
    expect(results[1]).toEqual(results[0]);
  });

  it('a sync with the setting loads the same values, and a second one changes nothing', async () => {
    const byEngine: string[][][] = [];
    for (const t of targets) {
      const before = await withWarehouse(t, promoted);
      const run = await sync(t, { promote });
      expect(run.status).toBe('succeeded');
      const after = await withWarehouse(t, promoted);
      expect(after, t.name).toEqual(before);
      if (t === targets[0]) {
        await sync(t, { promote });
        expect(await withWarehouse(t, promoted), t.name).toEqual(after);
      }
      byEngine.push(after);
    }
    expect(byEngine[1]).toEqual(byEngine[0]);
  });
});
