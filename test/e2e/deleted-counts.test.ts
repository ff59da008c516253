/**
 * The run summary's `deleted` column counts each stream's own records: rows of its lists (collaborators, labels,
 * custom field values) and children soft-deleted with their deleted parent are named apart on the parent's line, not
 * added to its count. Expected counts come from the simulator's data and the test's own deletions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/pipeline/summary.ts';
import type { SyncResult } from '../../src/pipeline/sync.ts';
import { deleteApplication } from '../../src/simulator/mutations.ts';
import type { JsonObject } from '../../src/util/json.ts';
import { postgresSchema, siteWithWarehouse, syncOnce } from '../support/harness.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const len = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

describe('deleted rows in the run summary', () => {
  const results: SyncResult[] = [];
  let own = 0;
  let lists: Record<string, number> = {};
  let children: Record<string, number> = {};

  beforeAll(async () => {
    const { sim, credentials, warehouse, remove } = await siteWithWarehouse({ scale: 'tiny', seed: 12 });
    cleanup.push(remove);
    const pg = await postgresSchema();
    cleanup.push(pg.drop);
    const targets = [{ warehouse }, { warehouse: pg.url, schema: pg.schema }];
    for (const t of targets) expect((await syncOnce(sim, { credentials, ...t })).status).toBe('succeeded');

    const ds = sim.control.data;
    const gone = ds.applications.rows
      .filter((a) => len(a.collaborators) > 0 && (ds.children(Number(a.id))?.tasks.length ?? 0) > 0)
      .slice(0, 3);
    expect(gone).toHaveLength(3);
    own = gone.length;
    // The rows of their own lists (collaborators, custom field values, labels by name).
    const labels = (v: unknown): number => new Set(Array.isArray(v) ? v.map((l) => JSON.stringify(l)) : []).size;
    lists = {
      application_collaborators: gone.reduce((n, a) => n + len(a.collaborators), 0),
      custom_field_values: gone.reduce((n, a) => n + len(a.custom_fields), 0),
      application_labels: gone.reduce((n, a) => n + labels(a.labels), 0),
    };
    children = { application_stages: 0, application_tasks: 0, application_notes: 0, task_responses: 0 };
    for (const a of gone) {
      const c = ds.children(Number(a.id))!;
      children.application_stages! += c.stages.length;
      children.application_tasks! += c.tasks.length;
      children.application_notes! += c.notes.length;
      for (const t of c.tasks) children.task_responses! += Object.keys((t.data as JsonObject | null) ?? {}).length;
    }
    for (const a of gone) deleteApplication(ds, Number(a.id));
    for (const t of targets) results.push(await syncOnce(sim, { credentials, ...t }));
  }, 120_000);

  it('counts only the stream own records on its line, on DuckDB and Postgres', () => {
    for (const result of results) {
      expect(result.status).toBe('succeeded');
      const apps = result.streams.find((s) => s.stream === 'applications')!;
      expect(apps.deleted).toBe(own);
      const expectedLists = Object.fromEntries(Object.entries(lists).filter(([, n]) => n > 0));
      expect(apps.listsDeleted ?? {}).toEqual(expectedLists);
      const expectedChildren = Object.fromEntries(Object.entries(children).filter(([, n]) => n > 0));
      expect(apps.cascaded).toEqual(expectedChildren);
      const line = formatSummary(result)
        .split('\n')
        .find((l) => l.startsWith('  applications '))!;
      expect(line).toMatch(new RegExp(`^ {2}applications +ok +\\d+ +\\d+ +${own} +0 `));
      const note = Object.entries(expectedChildren)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([table, n]) => `${table} ${n}`)
        .join(', ');
      expect(line).toContain(`deleted with them: ${note}`);
      const listNote = Object.entries(expectedLists)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([table, n]) => `${table} ${n}`)
        .join(', ');
      if (listNote) expect(line).toContain(`list rows deleted: ${listNote}`);
    }
  });
});
