/**
 * A complete walk soft-deletes what it no longer saw. A record it saw but could not load (quarantined), or one
 * that said nothing of an array (the key absent, or not an array), is still there: its rows stay live. Synced into a
 * real DuckDB file and a real Postgres schema, and replayed from the landed pages.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runReplay } from '../../src/pipeline/replay.ts';
import type { JsonObject } from '../../src/util/json.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { formatSummary } from '../../src/pipeline/summary.ts';
import { postgresSchema, siteWithWarehouse, syncOnce } from '../support/harness.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

type Query = (sql: string) => Promise<Record<string, unknown>[]>;

async function liveCount(query: Query, sql: string): Promise<{ live: number; all: number }> {
  const [row] = await query(
    `SELECT count(*) AS all_rows, count(*) FILTER (WHERE _deleted_at IS NULL) AS live FROM (${sql}) AS x`,
  );
  return { live: Number(row!.live), all: Number(row!.all_rows) };
}

describe('rows of records a complete walk saw but could not load, or that said nothing of an array', () => {
  it('stay live, while rows the walk truly no longer saw are soft-deleted (DuckDB, Postgres, replay)', async () => {
    const { sim, dir, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 31 });
    cleanup.push(remove);
    const pg = await postgresSchema();
    cleanup.push(pg.drop);
    const replayTarget = join(dir, 'replayed.duckdb');
    const targets = [
      { warehouse, schema: undefined },
      { warehouse: pg.url, schema: pg.schema },
      { warehouse: replayTarget, schema: undefined },
    ] as const;
    for (const t of targets)
      expect(
        (await syncOnce(sim, { credentials, warehouse: t.warehouse, ...(t.schema ? { schema: t.schema } : {}) }))
          .status,
      ).toBe('succeeded');

    const apps = sim.control.data.applications.rows;
    const withBridges = apps.filter(
      (a) =>
        Array.isArray(a.collaborators) &&
        a.collaborators.length > 0 &&
        Array.isArray(a.custom_fields) &&
        a.custom_fields.length > 0,
    );
    expect(withBridges.length).toBeGreaterThanOrEqual(3);
    const [unloadable, silent, emptied] = withBridges as [JsonObject, JsonObject, JsonObject];
    const withTasks = apps.filter(
      (a) => a !== unloadable && a !== silent && a !== emptied && sim.control.data.children(Number(a.id))?.tasks.length,
    );
    const [taskParent, stageParent] = withTasks as [JsonObject, JsonObject];
    const task = sim.control.data
      .children(Number(taskParent.id))!
      .tasks.find((t) => t.data && Object.keys(t.data).length)!;
    expect(task).toBeDefined();
    const stage = sim.control.data.children(Number(stageParent.id))!.stages[0]!;

    // Served as they are: the collections are the simulator's own data.
    unloadable.created_at = 'not a time'; // quarantined: the record has no usable created_at
    delete silent.collaborators;
    silent.custom_fields = null;
    emptied.collaborators = [];
    delete task.data;
    taskParent.title = `${String(taskParent.title)} (edited)`; // a new marker: its children are read again
    stage.created_at = 'not a time';
    stageParent.title = `${String(stageParent.title)} (edited)`;

    const rawDir = join(dir, 'raw');
    let landedRun = '';
    for (const t of targets.slice(0, 2)) {
      const result = await syncOnce(sim, {
        credentials,
        warehouse: t.warehouse,
        ...(t.schema ? { schema: t.schema } : { landRaw: true, rawDir }),
      });
      expect(result.streams.filter((s) => s.status !== 'ok')).toEqual([]);
      expect(result.streams.find((s) => s.stream === 'applications')?.quarantined).toBe(1);
      expect(result.streams.find((s) => s.stream === 'application_stages')?.quarantined).toBe(1);
      expect(result.streams.find((s) => s.stream === 'applications')?.silent).toBe(1);
      expect(result.streams.find((s) => s.stream === 'application_tasks')?.silent).toBeGreaterThanOrEqual(1);
      expect(formatSummary(result)).toMatch(/^ {2}applications .*1 records without a list they carry/m);
      if (!t.schema) landedRun = result.runId;
    }
    const replayed = await openWarehouse(replayTarget, { logger: silentLogger });
    try {
      await runReplay({ warehouse: replayed, rawDir, runId: landedRun, siteTimeZone: 'UTC' });
    } finally {
      await replayed.close();
    }

    for (const t of targets) {
      const w: Warehouse = await openWarehouse(t.warehouse, {
        ...(t.schema ? { schema: t.schema } : {}),
        logger: silentLogger,
      });
      const query: Query = (sql) => w.query(sql);
      try {
        const id = (a: JsonObject): number => Number(a.id);
        const collaboratorsOf = (a: JsonObject): string =>
          `SELECT _deleted_at FROM application_collaborators WHERE application_id = ${id(a)}`;
        const fieldsOf = (a: JsonObject): string =>
          `SELECT _deleted_at FROM custom_field_values WHERE entity_type = 'application' AND entity_id = ${id(a)}`;
        const where = t.schema ?? t.warehouse;
        // The quarantined application, its bridges and its children: all still live.
        expect(
          await liveCount(query, `SELECT _deleted_at FROM applications WHERE id = ${id(unloadable)}`),
          where,
        ).toEqual({
          live: 1,
          all: 1,
        });
        const stagesOfUnloadable = await liveCount(
          query,
          `SELECT _deleted_at FROM application_stages WHERE application_id = ${id(unloadable)}`,
        );
        expect(stagesOfUnloadable.live, where).toBe(stagesOfUnloadable.all);
        for (const sql of [
          collaboratorsOf(unloadable),
          fieldsOf(unloadable),
          collaboratorsOf(silent),
          fieldsOf(silent),
        ]) {
          const n = await liveCount(query, sql);
          expect(n.all, `${where}: ${sql}`).toBeGreaterThan(0);
          expect(n.live, `${where}: ${sql}`).toBe(n.all);
        }
        // Collaborators the site now lists as none: gone.
        const gone = await liveCount(query, collaboratorsOf(emptied));
        expect(gone.all, where).toBeGreaterThan(0);
        expect(gone.live, where).toBe(0);
        // A task without `data` keeps its responses; a stage record that could not be loaded stays.
        const responses = await liveCount(
          query,
          `SELECT _deleted_at FROM task_responses WHERE application_id = ${id(taskParent)} AND task_id = ${Number(task.id)}`,
        );
        expect(responses.all, where).toBeGreaterThan(0);
        expect(responses.live, where).toBe(responses.all);
        const stageRow = await liveCount(
          query,
          `SELECT _deleted_at FROM application_stages WHERE application_id = ${id(stageParent)} AND stage_id = ${Number((stage.stage as JsonObject).id)}`,
        );
        expect(stageRow, where).toEqual({ live: 1, all: 1 });
      } finally {
        await w.close();
      }
    }
  }, 240_000);
});
