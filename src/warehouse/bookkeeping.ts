import type { Kysely } from 'kysely';
import type { JsonValue } from '../util/json.ts';
import type { CommitPlan, RunRecord, StoredCredentials } from './types.ts';
import type { SqlStatement } from './merge-sql.ts';
import type { UnknownFieldRow } from './unknown-field-row.ts';
import type { CellValue } from '../normalize/table-def.ts';

/** Kysely's view of the bookkeeping tables (created by sql/001_bookkeeping.sql). Values as `query` returns them. */
export interface BookkeepingDb {
  _grantflow_runs: {
    run_id: string;
    started_at: string;
    finished_at: string | null;
    status: string;
    summary: string | null;
  };
  _grantflow_streams: { stream: string; state: string | null; updated_at: string; run_id: string | null };
  _grantflow_parents: {
    stream: string;
    parent_id: string;
    marker: string | null;
    synced_at: string;
    run_id: string | null;
  };
  _grantflow_credentials: {
    site: string;
    client_id: string;
    client_secret: string;
    access_token: string;
    refresh_token: string;
    seeded_from: string | null;
    updated_at: string;
  };
  _grantflow_catalog: { fingerprint: string; applied_at: string; tables: string };
  _grantflow_unknown_fields: UnknownFieldRow;
}

export type BookkeepingKysely = Kysely<BookkeepingDb>;

function parseJson(text: string | null): JsonValue | null {
  return text === null ? null : (JSON.parse(text) as JsonValue);
}

export async function readState(db: BookkeepingKysely, stream: string): Promise<JsonValue | null> {
  const row = await db.selectFrom('_grantflow_streams').select('state').where('stream', '=', stream).executeTakeFirst();
  return row ? parseJson(row.state) : null;
}

export async function readParentMarks(db: BookkeepingKysely, stream: string): Promise<Map<string, string | null>> {
  const rows = await db
    .selectFrom('_grantflow_parents')
    .select(['parent_id', 'marker'])
    .where('stream', '=', stream)
    .execute();
  return new Map(rows.map((r) => [r.parent_id, r.marker]));
}

export async function saveRun(db: BookkeepingKysely, run: RunRecord): Promise<void> {
  const values = {
    run_id: run.runId,
    started_at: run.startedAt,
    finished_at: run.finishedAt ?? null,
    status: run.status,
    summary: run.summary === undefined ? null : JSON.stringify(run.summary),
  };
  await db
    .insertInto('_grantflow_runs')
    .values(values)
    .onConflict((oc) =>
      oc.column('run_id').doUpdateSet({
        started_at: values.started_at,
        finished_at: values.finished_at,
        status: values.status,
        summary: values.summary,
      }),
    )
    .execute();
}

export async function listRuns(db: BookkeepingKysely, limit: number): Promise<RunRecord[]> {
  const rows = await db.selectFrom('_grantflow_runs').selectAll().orderBy('started_at', 'desc').limit(limit).execute();
  return rows.map((r) => ({
    runId: r.run_id,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    status: r.status,
    ...(r.summary === null ? {} : { summary: parseJson(r.summary) }),
  }));
}

export async function readCredentials(db: BookkeepingKysely, site: string): Promise<StoredCredentials | null> {
  const r = await db
    .selectFrom('_grantflow_credentials')
    .select(['client_id', 'client_secret', 'access_token', 'refresh_token', 'seeded_from'])
    .where('site', '=', site)
    .executeTakeFirst();
  return r ?? null;
}

export async function writeCredentials(db: BookkeepingKysely, site: string, creds: StoredCredentials): Promise<void> {
  const values = { site, ...pickCreds(creds), updated_at: new Date().toISOString() };
  await db
    .insertInto('_grantflow_credentials')
    .values(values)
    .onConflict((oc) => oc.column('site').doUpdateSet({ ...pickCreds(creds), updated_at: values.updated_at }))
    .execute();
}

function pickCreds(c: StoredCredentials): StoredCredentials {
  return {
    client_id: c.client_id,
    client_secret: c.client_secret,
    access_token: c.access_token,
    refresh_token: c.refresh_token,
    seeded_from: c.seeded_from ?? null,
  };
}

/** The drift catalog, newest first (by the run that last saw a path, then by when it was first seen). */
export async function listUnknownFields(db: BookkeepingKysely): Promise<UnknownFieldRow[]> {
  const rows = await db
    .selectFrom('_grantflow_unknown_fields')
    .selectAll()
    .orderBy('last_seen_at', 'desc')
    .orderBy('first_seen_at', 'desc')
    .orderBy('stream')
    .orderBy('path')
    .execute();
  return rows.map((r) => ({ ...r, records_seen: Number(r.records_seen) }));
}

/** Writes the catalog rows given (already merged with what was stored): one statement, all or nothing. */
export async function saveUnknownFields(db: BookkeepingKysely, rows: readonly UnknownFieldRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('_grantflow_unknown_fields')
    .values([...rows])
    .onConflict((oc) =>
      oc.columns(['stream', 'path']).doUpdateSet((eb) => ({
        kind: eb.ref('excluded.kind'),
        json_types: eb.ref('excluded.json_types'),
        records_seen: eb.ref('excluded.records_seen'),
        example: eb.ref('excluded.example'),
        first_run_id: eb.ref('excluded.first_run_id'),
        last_run_id: eb.ref('excluded.last_run_id'),
        first_seen_at: eb.ref('excluded.first_seen_at'),
        last_seen_at: eb.ref('excluded.last_seen_at'),
      })),
    )
    .execute();
}

const markChunk = 1000;

/** The bookkeeping writes of a commit, compiled by Kysely and run on the commit's own connection. */
export function commitStatements(db: BookkeepingKysely, plan: CommitPlan): SqlStatement[] {
  const out: SqlStatement[] = [];
  const add = (q: { compile(): { sql: string; parameters: readonly unknown[] } }): void => {
    const c = q.compile();
    out.push({ sql: c.sql, params: c.parameters as readonly CellValue[] });
  };
  if (plan.state) {
    const values = {
      stream: plan.state.stream,
      state: JSON.stringify(plan.state.value),
      updated_at: plan.extractedAt,
      run_id: plan.runId,
    };
    add(
      db
        .insertInto('_grantflow_streams')
        .values(values)
        .onConflict((oc) =>
          oc
            .column('stream')
            .doUpdateSet({ state: values.state, updated_at: values.updated_at, run_id: values.run_id }),
        ),
    );
  }
  if (plan.parentMarks) {
    const { stream, marks } = plan.parentMarks;
    for (let i = 0; i < marks.length; i += markChunk) {
      const rows = marks.slice(i, i + markChunk).map((m) => ({
        stream,
        parent_id: m.parentId,
        marker: m.marker,
        synced_at: plan.extractedAt,
        run_id: plan.runId,
      }));
      add(
        db
          .insertInto('_grantflow_parents')
          .values(dedupeMarks(rows))
          .onConflict((oc) =>
            oc.columns(['stream', 'parent_id']).doUpdateSet((eb) => ({
              marker: eb.ref('excluded.marker'),
              synced_at: eb.ref('excluded.synced_at'),
              run_id: eb.ref('excluded.run_id'),
            })),
          ),
      );
    }
  }
  if (plan.dropParentMarks && plan.dropParentMarks.parentIds.length > 0) {
    const { stream, parentIds } = plan.dropParentMarks;
    for (let i = 0; i < parentIds.length; i += markChunk) {
      add(
        db
          .deleteFrom('_grantflow_parents')
          .where('stream', '=', stream)
          .where('parent_id', 'in', parentIds.slice(i, i + markChunk)),
      );
    }
  }
  return out;
}

/** ON CONFLICT cannot touch a row twice in one statement: the last mark of a parent wins. */
function dedupeMarks<T extends { parent_id: string }>(rows: T[]): T[] {
  const byId = new Map<string, T>();
  for (const r of rows) byId.set(r.parent_id, r);
  return [...byId.values()];
}
