/**
 * Every model after real syncs from the simulator over HTTP, on DuckDB and on Postgres, equals the TypeScript
 * reference (test/models/model-reference.ts) computed from the records the simulator serves, every row and column:
 * after a first sync, and again after the site changed between syncs (applications moved to another program and
 * stage, trashed, deleted and created; a reviewer's assignment removed; a decision reversed; a transfer and a budget
 * gone).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import type { JsonObject, JsonValue } from '../../src/util/json.ts';
import type { CellValue, Row } from '../../src/normalize/table-def.ts';
import { loadModels } from '../../src/models/index.ts';
import { openWarehouse } from '../../src/warehouse/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import type { Dataset } from '../support/model-fixtures.ts';
import { references, sorted } from '../support/model-reference.ts';
import { postgresSchema, startSite, syncOnce, tempDir, writeCredentials } from '../support/harness.ts';

const refId = (v: JsonValue | undefined): number | null => {
  const id = (v as JsonObject | null | undefined)?.id;
  return typeof id === 'number' ? id : null;
};
const int = (v: JsonValue | undefined): number | null => (typeof v === 'number' ? v : null);
/** Timestamps as the site sends them; a naive one is UTC (the site's time zone here). */
const time = (v: JsonValue | undefined): string | null => {
  if (typeof v !== 'string' || v === '') return null;
  return /(Z|[+-]\d\d:\d\d)$/.test(v) ? v : `${v}Z`;
};
/** Money the simulator sends as a number of dollars made from integer cents: two decimals are exact. */
const amount = (v: JsonValue | undefined): string | null => (typeof v === 'number' ? v.toFixed(2) : null);
const moneyColumns = (r: JsonObject, columns: string[]): Row =>
  Object.fromEntries(columns.map((c) => [c, amount(r[c])]));

/** The site's records as the rows the reference reads, mapped here, not by grantflow's normaliser. */
function siteDataset(sim: SimulatorHandle): Dataset {
  const c = (name: string): JsonObject[] => sim.control.collection(name);
  const endpoint = (t: JsonObject, side: 'source' | 'destination', type: number): number | null =>
    t[`${side}_type`] === type ? refId(t[side]) : null;
  return {
    programs: c('programs').map((p) => ({ id: int(p.id), name: String(p.name) })),
    stages: c('stages').map((s) => ({ id: int(s.id), title: String(s.title) })),
    users: c('users').map((u) => ({
      id: int(u.id),
      first_name: String(u.first_name),
      last_name: String(u.last_name),
      email: String(u.email),
    })),
    applications: c('applications').map((a) => ({
      id: int(a.id),
      program_id: refId(a.program),
      current_stage_id: refId(a.current_stage),
      state: int(a.state),
      last_submitted_at: time(a.last_submitted_at),
    })),
    application_stages: c('application_stages').map((s) => ({
      application_id: int(s.application_id),
      stage_id: refId(s.stage),
      state: int(s.state),
      created_at: time(s.created_at),
      reviews_assigned: int(s.reviews_assigned),
      reviews_submitted: int(s.reviews_submitted),
      reviews_completed: int(s.reviews_completed),
    })),
    assignments: c('assignments').map((s) => ({
      application_id: refId(s.application),
      reviewer_id: refId(s.reviewer),
      stage_id: refId(s.stage),
      program_id: refId(s.program),
    })),
    awards: c('awards').map((w) => ({
      id: int(w.id),
      application_id: refId(w.application),
      decision: int(w.decision),
      value: amount(w.value),
      awarded_at: time(w.awarded_at),
      created_at: time(w.created_at),
    })),
    funds: c('funds').map((f) => ({ id: int(f.id), name: String(f.name), balance: amount(f.balance) })),
    budgets: c('budgets').map((b) => ({
      id: int(b.id),
      fund_id: refId(b.fund),
      program_id: refId(b.program),
      ...moneyColumns(b, ['budget', 'allocated', 'paid', 'balance']),
    })),
    financial_transactions: c('financial_transactions').map((t) => ({
      id: int(t.id),
      transaction_type: int(t.transaction_type),
      amount: amount(t.amount),
      source_fund_id: endpoint(t, 'source', 2),
      destination_fund_id: endpoint(t, 'destination', 2),
      destination_program_id: endpoint(t, 'destination', 1),
    })),
  };
}

/** Changes between the syncs, each touching what one model reads; the application changes move `updated_at`. */
function changeSite(sim: SimulatorHandle): void {
  const ds = sim.control.data;
  const now = new Date().toISOString();
  sim.control.applyChanges({ deleted: 2, created: 3, updated: 2 });
  const awarded = ds.awards.rows.filter((w) => w.decision === 0 && ds.applications.get(refId(w.application) ?? 0));
  // Moved to another program, into that program's first stage, with a stage record there.
  const moved = ds.applications.get(refId(awarded[0]?.application) ?? 0)!;
  const program = ds.programs.rows.find((p) => p.id !== refId(moved.program))!;
  const stage = (ds.stagesByProgram.get(Number(program.id)) ?? [])[0]!;
  moved.program = { id: program.id ?? null, name: program.name ?? null };
  moved.current_stage = { title: stage.title, id: stage.id };
  moved.updated_at = now;
  ds.children(Number(moved.id))?.stages.push({
    id: 90_000,
    state: 0,
    status: null,
    stage: { title: stage.title, id: stage.id },
    created_at: now,
    date_submitted: now,
    date_reopened: null,
    task_completion: 100,
    reviews_assigned: 2,
    reviews_submitted: 1,
    reviews_completed: 1,
  });
  // Trashed.
  const trashed = ds.applications.get(refId(awarded[1]?.application) ?? 0)!;
  trashed.state = 4;
  trashed.updated_at = now;
  // A decision reversed.
  const reversed = awarded[2]!;
  reversed.decision = 1;
  reversed.updated_at = now;
  // A reviewer taken off an application, a transfer and a budget gone.
  ds.assignments.splice(0, 1);
  ds.transactions.remove(Number(ds.transactions.rows.find((t) => t.transaction_type === 2)?.id));
  ds.budgets.remove(Number(ds.budgets.rows[ds.budgets.size - 1]?.id));
}

let sim: SimulatorHandle;
let dir: Awaited<ReturnType<typeof tempDir>>;
let pgTarget: Awaited<ReturnType<typeof postgresSchema>>;
const targets: Record<string, { warehouse: string; schema?: string }> = {};
const expected: Record<'first' | 'changed', Dataset> = { first: {}, changed: {} };
const actual: Record<string, Record<string, CellValue>[]> = {};
/** When each sync read the applications (their `_extracted_at`): stage_aging counts days up to it. */
const fetchedAt: Record<string, CellValue> = {};

/** The site's records as fetched by one sync: the applications carry the time it read them. */
const fetchedBy = (data: Dataset, at: CellValue | undefined): Dataset => ({
  ...data,
  applications: (data.applications ?? []).map((a) => ({ ...a, _extracted_at: at ?? null })),
});

async function syncAll(credentials: string, label: string): Promise<void> {
  for (const [name, t] of Object.entries(targets)) {
    const result = await syncOnce(sim, { credentials, warehouse: t.warehouse, schema: t.schema, models: true });
    expect(result.status, `${label} sync into ${name}`).toBe('succeeded');
    const warehouse = await openWarehouse(t.warehouse, { schema: t.schema, logger: silentLogger });
    try {
      for (const m of loadModels())
        actual[`${label}/${name}/${m.name}`] = await warehouse.query(`SELECT * FROM ${m.name}`);
      const [read] = await warehouse.query(
        'SELECT max(_extracted_at) AS at FROM applications WHERE _deleted_at IS NULL',
      );
      fetchedAt[`${label}/${name}`] = read?.at ?? null;
    } finally {
      await warehouse.close();
    }
  }
}

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 11 });
  dir = await tempDir();
  pgTarget = await postgresSchema();
  targets.duckdb = { warehouse: join(dir.path, 'w.duckdb') };
  targets.postgres = { warehouse: pgTarget.url, schema: pgTarget.schema };
  const credentials = await writeCredentials(sim, join(dir.path, 'creds.json'));
  expected.first = siteDataset(sim);
  await syncAll(credentials, 'first');
  changeSite(sim);
  expected.changed = siteDataset(sim);
  await syncAll(credentials, 'changed');
}, 240_000);
afterAll(async () => {
  await sim?.close();
  await pgTarget?.drop();
  await dir?.remove();
});

it('the changes between the syncs reach every model', () => {
  for (const m of loadModels()) {
    const [before, after] = (['first', 'changed'] as const).map((label) =>
      sorted(references[m.name]!(expected[label])),
    );
    expect(after, m.name).not.toEqual(before);
  }
});

describe.each(['duckdb', 'postgres'])('models from the simulated site on %s', (target) => {
  describe.each(['first', 'changed'] as const)('after the %s sync', (label) => {
    it.each(loadModels().map((m) => m.name))('%s equals the reference from the site records', (name) => {
      const rows = references[name]!(fetchedBy(expected[label], fetchedAt[`${label}/${target}`]));
      expect(rows.length).toBeGreaterThan(0);
      expect(sorted(actual[`${label}/${target}/${name}`] ?? [])).toEqual(sorted(rows));
    });
  });
});
