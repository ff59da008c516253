/**
 * What the real service sends beyond spec 2.5/2.3: task answers wrapped as {label, response}, applications with
 * labels and a current status, and timestamps without a zone. Synced from the simulator (which serves the wrapped
 * shape by default) into DuckDB and Postgres; every expected value is computed from the simulator's served data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/pipeline/summary.ts';
import type { SyncResult } from '../../src/pipeline/sync.ts';
import type { JsonObject, JsonValue } from '../../src/util/json.ts';
import {
  dumpWarehouse,
  postgresSchema,
  siteWithWarehouse,
  syncOnce,
  tempDir,
  type TableDump,
} from '../support/harness.ts';
import type { SimulatorHandle } from '../../src/simulator/index.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

type Cell = string | number | null;

/** The typed columns spec 2.5 makes unambiguous, read off a response by the rules of the spec, not grantflow's code. */
function expectedTyped(response: JsonValue): Record<string, Cell> {
  const none = { text_value: null, number_value: null, option_id: null, option_ids: null, other_text: null };
  const ints = (v: JsonValue): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x));
  if (typeof response === 'string') return { ...none, text_value: response };
  if (typeof response === 'number')
    return { ...none, number_value: response, option_id: Number.isInteger(response) ? response : null };
  if (ints(response)) return { ...none, option_ids: JSON.stringify(response) };
  if (typeof response === 'object' && response !== null && !Array.isArray(response)) {
    const { value, other } = response;
    return {
      ...none,
      option_id: typeof value === 'number' ? value : null,
      option_ids: value !== undefined && ints(value) ? JSON.stringify(value) : null,
      other_text: typeof other === 'string' ? other : other === undefined ? null : JSON.stringify(other),
    };
  }
  return none;
}

/** `YYYY-MM-DDTHH:MM:SS[.f]` with no `Z` and no offset. */
const naive = (v: JsonValue | undefined): boolean =>
  typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(v);

const key = (r: Record<string, unknown>, ...cols: string[]): string => cols.map((c) => String(r[c])).join('|');

describe('the wrapped shape the real service sends', () => {
  let sim: SimulatorHandle;
  let dumps: Record<string, TableDump>[] = [];
  const results: SyncResult[] = [];

  beforeAll(async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 23 });
    cleanup.push(site.remove);
    sim = site.sim;
    const pg = await postgresSchema();
    cleanup.push(pg.drop);
    const targets = [{ warehouse: site.warehouse }, { warehouse: pg.url, schema: pg.schema }];
    for (const t of targets) results.push(await syncOnce(sim, { credentials: site.credentials, models: false, ...t }));
    dumps = await Promise.all(
      targets.map((t) => dumpWarehouse(t.warehouse, 'schema' in t ? { schema: t.schema } : {})),
    );
  }, 180_000);

  it('is what the simulator serves by default', () => {
    expect(sim.control.config.answerShape).toBe('wrapped');
    const entries = sim.control
      .collection('application_tasks')
      .flatMap((t) => Object.values((t.data as JsonObject) ?? {}));
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries)
      expect(Object.keys(e as JsonObject).every((k) => k === 'label' || k === 'response')).toBe(true);
  });

  it('types every answer and keeps every label, on DuckDB and Postgres alike', () => {
    const served = sim.control.collection('application_tasks');
    const expected = new Map<string, Record<string, Cell>>();
    for (const t of served)
      for (const [q, entry] of Object.entries((t.data as JsonObject | null) ?? {})) {
        const { label, response } = entry as JsonObject;
        expected.set(`${String(t.application_id)}|${String(t.id)}|${q}`, {
          question_label: typeof label === 'string' ? label : null,
          ...expectedTyped(response ?? null),
        });
      }
    const labelled = [...expected.values()].filter((e) => e.question_label !== null);
    // The site has labelled and unlabelled questions, hostile labels included, and every kind of answer.
    expect(labelled.length).toBeGreaterThan(0);
    expect(labelled.length).toBeLessThan(expected.size);
    expect(labelled.some((e) => String(e.question_label).includes('\n'))).toBe(true);
    for (const col of ['text_value', 'number_value', 'option_id', 'option_ids', 'other_text'])
      expect(
        [...expected.values()].some((e) => e[col] !== null),
        col,
      ).toBe(true);

    for (const dump of dumps) {
      const rows = dump.task_responses!.content.filter((r) => r._deleted !== true);
      const got = new Map(
        rows.map((r) => [
          key(r, 'application_id', 'task_id', 'question_id'),
          {
            question_label: r.question_label,
            text_value: r.text_value,
            number_value: r.number_value === null ? null : Number(r.number_value),
            option_id: r.option_id === null ? null : Number(r.option_id),
            option_ids: r.option_ids,
            other_text: r.other_text,
          },
        ]),
      );
      expect(got).toEqual(expected);
    }
    expect(dumps[1]!.task_responses!.checksum).toBe(dumps[0]!.task_responses!.checksum);
  });

  it('loads the labels and current status of applications, on DuckDB and Postgres alike', () => {
    const apps = sim.control.collection('applications');
    const labels = apps.flatMap((a) => (a.labels as string[]).map((l) => `${String(a.id)}|${l}`)).sort();
    expect(labels.length).toBeGreaterThan(0);
    const status = new Map(apps.map((a) => [String(a.id), (a.status as JsonObject).id]));
    for (const dump of dumps) {
      expect(dump.application_labels!.content.map((r) => key(r, 'application_id', 'label')).sort()).toEqual(labels);
      const got = new Map(dump.applications!.content.map((r) => [String(r.id), Number(r.current_status_id)]));
      expect(got).toEqual(status);
    }
    expect(dumps[1]!.application_labels!.checksum).toBe(dumps[0]!.application_labels!.checksum);
    expect(dumps[1]!.applications!.checksum).toBe(dumps[0]!.applications!.checksum);
  });

  it('counts the timestamps that came without a zone and names the zone it read them in', () => {
    const apps = sim.control.collection('applications');
    const expected = apps.reduce(
      (n, a) => n + [a.created_at, a.updated_at, a.last_submitted_at].filter(naive).length,
      0,
    );
    expect(expected).toBeGreaterThan(0);
    for (const result of results) {
      expect(result.status).toBe('succeeded');
      expect(result.streams.find((s) => s.stream === 'applications')?.naiveTimestamps).toBe(expected);
      const total = result.streams.reduce((n, s) => n + (s.naiveTimestamps ?? 0), 0);
      expect(formatSummary(result)).toContain(
        `${total} timestamps arrived without a zone: read in UTC (--site-time-zone)`,
      );
    }
  });
});

describe('the bare shape of spec 2.5, chosen by a setting', () => {
  it('types the same answers as the wrapped shape, without labels', async () => {
    const site = await siteWithWarehouse({ scale: 'tiny', seed: 23, answerShape: 'bare' });
    cleanup.push(site.remove);
    const other = await tempDir();
    cleanup.push(other.remove);
    expect(
      (await syncOnce(site.sim, { credentials: site.credentials, models: false, warehouse: site.warehouse })).status,
    ).toBe('succeeded');
    const served = site.sim.control.collection('application_tasks');
    const entries = served.flatMap((t) => Object.values((t.data as JsonObject) ?? {}));
    expect(entries.some((e) => typeof e === 'string' || typeof e === 'number' || Array.isArray(e))).toBe(true);
    site.sim.control.setAnswerShape('wrapped');
    const wrappedWarehouse = `${other.path}/wrapped.duckdb`;
    expect(
      (await syncOnce(site.sim, { credentials: site.credentials, models: false, warehouse: wrappedWarehouse })).status,
    ).toBe('succeeded');
    const typed = (d: Record<string, TableDump>) =>
      d.task_responses!.content.map((r) => {
        const { question_label: _l, _raw: _r, ...rest } = r;
        return rest;
      });
    const bare = await dumpWarehouse(site.warehouse);
    const wrapped = await dumpWarehouse(wrappedWarehouse);
    expect(typed(bare)).toEqual(typed(wrapped));
    expect(bare.task_responses!.content.every((r) => r.question_label === null)).toBe(true);
    expect(wrapped.task_responses!.content.some((r) => r.question_label !== null)).toBe(true);
  });
});
