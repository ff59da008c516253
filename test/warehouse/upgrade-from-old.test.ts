/**
 * Upgrading a warehouse an older grantflow wrote: a Postgres schema synced by revision 9bd5c27 (a pg_dump in
 * test/fixtures/, see the README there) is restored, synced by the current code, and compared with a fresh sync of
 * the same simulated site. As docs/architecture.md says, rows the upgrading sync did not read again keep what the
 * old build wrote; those must be exactly as restored, every other row as the fresh sync has it.
 */
import { readFileSync } from 'node:fs';

import { join } from 'node:path';

import { Readable } from 'node:stream';

import { pipeline } from 'node:stream/promises';

import { gunzipSync } from 'node:zlib';

import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadModels, modelTableDefs } from '../../src/models/index.ts';

import type { TableDef } from '../../src/normalize/table-def.ts';

import type { SyncResult } from '../../src/pipeline/sync.ts';

import type { SimulatorHandle } from '../../src/simulator/index.ts';

import { hasMetadata } from '../../src/warehouse/index.ts';

import {
  clockModels,
  postgresSchema,
  postgresUrl,
  startSite,
  syncOnce,
  tempDir,
  writeCredentials,
} from '../support/harness.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { tables } from '../../src/streams/registry.ts';

const fixture = new URL('../fixtures/postgres-9bd5c27-tiny-seed3.sql.gz', import.meta.url);
/** The site the fixture was synced from. */
const site = { scale: 'tiny', seed: 3 } as const;

/**
 * Runs a plain-format pg_dump into `schema` instead of the one it dumped: psql's job, done here with COPY streams so
 * the test needs no client binaries. Only statements are renamed; COPY data goes in as dumped.
 */
async function restoreDump(file: URL, schema: string): Promise<void> {
  const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n');
  const dumped = lines.map((l) => /^CREATE SCHEMA (\w+);$/.exec(l)?.[1]).find((s) => s !== undefined);
  if (dumped === undefined) throw new Error(`${file.pathname} creates no schema`);
  const renamed = new RegExp(`\\b${dumped}\\b`, 'g');
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    let statement = '';
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      // Comments, blank lines and psql meta-commands (\restrict) between statements.
      if (statement === '' && (line === '' || line.startsWith('--') || line.startsWith('\\'))) continue;
      statement += `${line}\n`;
      if (!line.endsWith(';')) continue;
      const sql = statement.replace(renamed, schema);
      statement = '';
      if (!/^COPY .* FROM stdin;\n$/s.test(sql)) {
        await client.query(sql);
        continue;
      }
      const end = lines.indexOf('\\.', i + 1);
      const data = lines.slice(i + 1, end).map((l) => `${l}\n`);
      await pipeline(Readable.from(data), client.query(copyFrom(sql)));
      i = end;
    }
  } finally {
    await client.end();
  }
}

type Row = Record<string, unknown>;

/**
 * The tables compared: every catalog table but the run bookkeeping (whose rows record runs), and every model but
 * those whose rows depend on when their sync ran (clockModels).
 */
const compared: readonly TableDef[] = [
  ...tables.filter((t) => t.kind !== 'bookkeeping' || t.name === '_grantflow_quarantine'),
  ...modelTableDefs(loadModels()).filter((m) => !clockModels.has(m.name)),
];

/** Columns that say when and by which run a row was written, as the e2e harness leaves them out. */
function runColumns(table: TableDef): ReadonlySet<string> {
  return new Set(
    table.name === '_grantflow_quarantine'
      ? ['run_id', 'quarantined_at']
      : ['_extracted_at', '_run_id', 'downloaded_at'],
  );
}

/** A row as two syncs of one site must agree on: run columns aside, a deletion reduced to deleted or not. */
function comparable(table: TableDef, row: Row): Row {
  const skip = runColumns(table);
  const kept = Object.entries(row)
    .filter(([c]) => !skip.has(c))
    .map(([c, v]) => (c === '_deleted_at' ? ['_deleted', v !== null] : [c, v]));
  return Object.fromEntries(kept) as Row;
}

/** The columns in which two rows differ (a failure names them rather than printing rows up to 100 KB long). */
function differing(a: Row, b: Row | undefined): string[] {
  if (b === undefined) return ['the whole row'];
  const columns = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...columns].filter((c) => JSON.stringify(a[c]) !== JSON.stringify(b[c]));
}

/** Tables newer than the build that wrote the restored schema (read as empty there). */
const newerThanFixture = new Set<string>();

/** Every compared table of `schema`, each row keyed by its primary key (models, which have none, by content). */
async function readTables(schema: string): Promise<Map<string, Map<string, Row>>> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    const out = new Map<string, Map<string, Row>>();
    for (const table of compared) {
      // Models live in the analytics schema (analytics-schema.ts); the old build wrote them beside the core tables.
      const analytics = await client.query(
        `SELECT to_regclass('${schema}_analytics.${table.name}') IS NOT NULL AS present`,
      );
      const from = table.kind === 'model' && analytics.rows[0]?.present === true ? `${schema}_analytics` : schema;
      // A table newer than the build that wrote the schema is not there yet: it held no rows.
      const exists = await client.query(`SELECT to_regclass('${from}.${table.name}') IS NOT NULL AS present`);
      if (exists.rows[0]?.present !== true) {
        newerThanFixture.add(table.name);
        out.set(table.name, new Map());
        continue;
      }
      const { rows } = await client.query<{ row: Row }>(`SELECT to_jsonb(t) AS row FROM ${from}.${table.name} AS t`);
      const byKey = new Map<string, Row>();
      for (const { row } of rows) {
        const content = JSON.stringify(comparable(table, row));
        // Model rows, which have no key, by content and which of equal rows they are.
        const key =
          table.primaryKey.length > 0
            ? JSON.stringify(table.primaryKey.map((c) => row[c]))
            : `${content} #${[...byKey.keys()].filter((k) => k.startsWith(`${content} #`)).length}`;
        byKey.set(key, row);
      }
      out.set(table.name, byKey);
    }
    return out;
  } finally {
    await client.end();
  }
}

describe('a Postgres warehouse grantflow 9bd5c27 wrote, synced by the current code', () => {
  let sim: SimulatorHandle;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let upgraded: Awaited<ReturnType<typeof postgresSchema>>;
  let fresh: Awaited<ReturnType<typeof postgresSchema>>;
  let restored: Map<string, Map<string, Row>>;
  let upgrade: SyncResult;

  beforeAll(async () => {
    sim = await startSite(site);
    dir = await tempDir();
    upgraded = await postgresSchema();
    fresh = await postgresSchema();
    await restoreDump(fixture, upgraded.schema);
    restored = await readTables(upgraded.schema);
    upgrade = await syncOnce(sim, {
      credentials: await writeCredentials(sim, join(dir.path, 'upgrade-creds.json')),
      warehouse: postgresUrl,
      schema: upgraded.schema,
      // The fixture's last full refresh ages with the calendar: a week after it was made, the sync would take the
      // periodic full refresh's path instead of the incremental one an upgrade usually takes.
      fullRefreshAfterDays: 1e6,
    });
    const reference = await syncOnce(sim, {
      credentials: await writeCredentials(sim, join(dir.path, 'fresh-creds.json')),
      warehouse: postgresUrl,
      schema: fresh.schema,
    });
    expect(reference.status).toBe('succeeded');
  });

  afterAll(async () => {
    await upgraded?.drop();
    await fresh?.drop();
    await sim?.close();
    await dir?.remove();
  });

  it('syncs it', () => {
    expect(upgrade.status).toBe('succeeded');
  });

  it('moves the model tables the old build wrote beside the core tables into the analytics schema', async () => {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      const where = async (schema: string): Promise<string[]> =>
        (
          await client.query<{ tablename: string }>(
            'SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename = ANY($2) ORDER BY 1',
            [schema, loadModels().map((m) => m.name)],
          )
        ).rows.map((r) => r.tablename);
      const models = loadModels()
        .map((m) => m.name)
        .sort();
      // The old build had them there: otherwise the move would go untested.
      expect(
        [...restored.keys()].filter((t) => models.includes(t) && restored.get(t)!.size > 0).length,
      ).toBeGreaterThan(0);
      expect(await where(upgraded.schema)).toEqual([]);
      expect(await where(`${upgraded.schema}_analytics`)).toEqual(models);
    } finally {
      await client.end();
    }
  });

  it('leaves every table as a fresh sync has it, but rows not read again, which stay as the old build wrote them', async () => {
    const after = await readTables(upgraded.schema);
    const reference = await readTables(fresh.schema);
    const differences: string[] = [];
    let readAgainRows = 0;
    for (const table of compared) {
      const mine = after.get(table.name)!;
      const theirs = reference.get(table.name)!;
      const before = restored.get(table.name)!;
      // A restore that brought nothing would make the upgrade a fresh sync, and this test a vacuous one.
      if (theirs.size > 0 && before.size === 0 && !newerThanFixture.has(table.name))
        differences.push(`${table.name}: nothing restored`);
      for (const key of theirs.keys())
        if (!mine.has(key)) differences.push(`${table.name} ${key}: missing after the upgrade`);
      for (const [key, row] of mine) {
        const other = theirs.get(key);
        if (other === undefined) {
          differences.push(`${table.name} ${key}: not in a fresh sync`);
          continue;
        }
        // Rows without run columns (models) are rebuilt by every sync.
        const readAgain = !hasMetadata(table) || row._run_id === upgrade.runId;
        if (hasMetadata(table) && readAgain) readAgainRows++;
        const changed = readAgain
          ? differing(comparable(table, row), comparable(table, other))
          : // Typed as the old build typed it, maybe; but there, deleted or not as in a fresh sync, and untouched.
            [
              ...differing({ _deleted: row._deleted_at !== null }, { _deleted: other._deleted_at !== null }),
              ...differing(row, before.get(key)).map((c) => `${c} (changed from the restored row)`),
            ];
        if (changed.length > 0) differences.push(`${table.name} ${key}: ${changed.join(', ')} differ`);
      }
    }
    expect(differences).toEqual([]);
    expect(readAgainRows).toBeGreaterThan(0);
  });

  it('answers status and runs and tests the models', async () => {
    const target = ['--warehouse', postgresUrl, '--schema', upgraded.schema];
    const status = await runCliInProcess(['status', ...target]);
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(upgrade.runId);
    const models = await runCliInProcess(['models', 'run', ...target]);
    expect(models.stderr).toBe('');
    expect(models.code).toBe(0);
    expect(models.stdout).toContain(`${loadModels().length} models built`);
    const dataTests = await runCliInProcess(['models', 'test', ...target]);
    expect(dataTests.code).toBe(0);
    expect(dataTests.stdout).toMatch(/ 0 failed/);
  });
});
