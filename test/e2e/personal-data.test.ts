import { runCliInProcess } from '../support/cli-in-process.ts';
import { filesUnder, strings } from '../support/served-values.ts';
/**
 * `personalData: pseudonymize` against the simulator, on both engines: what leaves the warehouse (every Parquet file,
 * the manifest, every report page) holds no name, email or free-text answer the site served; an applicant's token is
 * the same in the applications, awards and users snapshots and in a second run; every count and model figure equals
 * that of a `keep` run of the same site. Without the key the sync stops at once (exit 2, one line).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { PersonalColumns } from '../../src/privacy/personal-columns.ts';
import {
  dropPostgresSchema,
  postgresSchema,
  postgresUrl,
  startSite,
  syncCliArgs,
  tempDir,
  writeCredentials,
  type CliResult,
} from '../support/harness.ts';

const key = 'a-test-key-for-the-pseudonyms-0123456789';
const engines = ['duckdb', 'postgres'] as const;

/** What the site served of personal data: identifiers (names, emails, ...) and free text (answers, notes, titles). */
function servedPersonalData(sim: SimulatorHandle): { identifiers: Set<string>; freeText: Set<string> } {
  const c = sim.control;
  const identifiers = new Set<string>();
  for (const u of c.collection('users')) {
    for (const f of ['first_name', 'last_name', 'email']) if (typeof u[f] === 'string') identifiers.add(u[f]);
    identifiers.add(`${String(u.first_name)} ${String(u.last_name)}`);
  }
  for (const o of c.collection('organizations'))
    for (const f of ['email', 'phone', 'address', 'tax_number']) if (typeof o[f] === 'string') identifiers.add(o[f]);
  const freeText = new Set<string>();
  for (const n of c.collection('application_notes')) freeText.add(String(n.content));
  for (const t of c.collection('application_tasks')) for (const s of strings(t.data)) freeText.add(s);
  for (const a of c.collection('applications')) freeText.add(String(a.title));
  for (const a of c.collection('awards'))
    for (const f of ['applicant_note', 'notification_message']) if (typeof a[f] === 'string') freeText.add(a[f]);
  identifiers.delete('');
  freeText.delete('');
  return { identifiers, freeText };
}

/** Every row of a Parquet file, each cell as text (null as null). */
async function parquetRows(duck: DuckDBConnection, path: string): Promise<Record<string, string | null>[]> {
  const reader = await duck.runAndReadAll(`SELECT * FROM read_parquet('${path.replace(/'/g, "''")}')`);
  return reader
    .getRowObjectsJson()
    .map((r) =>
      Object.fromEntries(
        Object.entries(r).map(([k, v]) => [k, v === null ? null : typeof v === 'string' ? v : JSON.stringify(v)]),
      ),
    );
}

interface Run {
  readonly dir: string;
  readonly result: CliResult;
}

describe.each(engines)('personalData pseudonymize on %s', (engine) => {
  let sim: SimulatorHandle;
  let work: { path: string; remove: () => Promise<void> };
  const schemas: string[] = [];
  let duckInstance: DuckDBInstance;
  let duck: DuckDBConnection;
  let keep: Run;
  let pseudo: Run;
  let again: Run;
  /** The pseudonymised warehouse's arguments. */
  let pseudoWarehouse: string[];

  /** A sync of the site into a warehouse of its own (`name`), snapshots and report under `<work>/<name>`. */
  async function sync(name: string, extra: string[], env: NodeJS.ProcessEnv = {}, warehouse?: string[]): Promise<Run> {
    const dir = join(work.path, name);
    await writeCredentials(sim, join(work.path, `${name}-creds.json`));
    let target = warehouse;
    if (target === undefined && engine === 'postgres') {
      const { schema } = await postgresSchema();
      schemas.push(schema);
      target = ['--warehouse', postgresUrl, '--schema', schema];
    }
    const args = [
      ...syncCliArgs(sim.url, dir, {
        snapshot: true,
        credentials: join(work.path, `${name}-creds.json`),
        warehouse: target ?? ['--warehouse', join(work.path, `${name}.duckdb`)],
      }),
      '--report',
      join(dir, 'report'),
      ...extra,
    ];
    const result = await runCliInProcess(args, { env: { GRANTFLOW_PSEUDONYM_KEY: '', ...env } });
    return { dir, result };
  }

  beforeAll(async () => {
    sim = await startSite({ seed: 43 });
    work = await tempDir('grantflow-personal-data-');
    duckInstance = await DuckDBInstance.create(':memory:');
    duck = await duckInstance.connect();
    keep = await sync('keep', []);
    pseudo = await sync('pseudo', ['--personal-data', 'pseudonymize'], { GRANTFLOW_PSEUDONYM_KEY: key });
    // The same warehouse again (an incremental run): its tokens must be those of the first.
    pseudoWarehouse =
      engine === 'postgres'
        ? ['--warehouse', postgresUrl, '--schema', schemas[schemas.length - 1] ?? '']
        : ['--warehouse', join(work.path, 'pseudo.duckdb')];
    again = await sync('again', ['--personal-data', 'pseudonymize'], { GRANTFLOW_PSEUDONYM_KEY: key }, pseudoWarehouse);
  }, 600_000);

  afterAll(async () => {
    duck?.closeSync();
    duckInstance?.closeSync();
    await sim?.close();
    await work?.remove();
    for (const s of schemas) await dropPostgresSchema(s);
  });

  it('syncs both ways', () => {
    expect(keep.result.code, keep.result.stderr).toBe(0);
    expect(pseudo.result.code, pseudo.result.stderr).toBe(0);
    expect(again.result.code, again.result.stderr).toBe(0);
  });

  it('stops at once without the key: one line, exit 2', async () => {
    const run = await sync('nokey', ['--personal-data', 'pseudonymize']);
    expect(run.result.code).toBe(2);
    expect(run.result.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.result.stderr).toMatch(/GRANTFLOW_PSEUDONYM_KEY/);
  });

  it('leaves no name, email or free-text answer in any Parquet file, manifest or report page', async () => {
    const { identifiers, freeText } = servedPersonalData(sim);
    // A free text the site also sent in a column that holds no personal data (a program's name, say) is no leak:
    // found in the keep run's files, by the classification of their columns.
    const personal = PersonalColumns.of();
    const plain = new Set<string>();
    for (const file of filesUnder(join(keep.dir, 'snapshots')).filter((f) => f.endsWith('.parquet'))) {
      const table =
        file
          .split('/')
          .at(-1)
          ?.replace(/\.parquet$/, '') ?? '';
      for (const row of await parquetRows(duck, file))
        for (const [column, v] of Object.entries(row))
          if (v !== null && personal.kind(table, column) === null) plain.add(v);
    }
    const forbidden = [...identifiers, ...[...freeText].filter((t) => !plain.has(t))];
    expect(forbidden.length).toBeGreaterThan(50);

    const leaks = async (run: Run): Promise<string[]> => {
      const files = filesUnder(join(run.dir, 'snapshots'));
      const reportPages = filesUnder(join(run.dir, 'report'));
      expect(files.filter((f) => f.endsWith('.parquet')).length).toBeGreaterThan(20);
      expect(reportPages.length).toBeGreaterThan(5);
      const found: string[] = [];
      // Bytes first: the manifest, the report's HTML, and each Parquet file's footer (column statistics are stored
      // uncompressed). HTML escapes some characters, so pages are searched as text too.
      for (const file of [...files, ...reportPages]) {
        const bytes = readFileSync(file);
        const html = bytes
          .toString('utf8')
          .replace(/&#39;/g, "'")
          .replace(/&amp;/g, '&')
          .replace(/&quot;/g, '"');
        for (const v of forbidden) {
          // Short identifiers (a first name alone) are searched as whole cells below, not as bytes.
          if (v.length < 8) continue;
          if (bytes.includes(Buffer.from(v, 'utf8')) || html.includes(v)) found.push(`${file}: ${v}`);
        }
      }
      // Then every cell of every file, decompressed, as a whole value.
      const forbiddenCells = new Set(forbidden);
      for (const file of files.filter((f) => f.endsWith('.parquet'))) {
        for (const row of await parquetRows(duck, file))
          for (const [column, v] of Object.entries(row))
            if (v !== null && forbiddenCells.has(v)) found.push(`${file} ${column}: ${v}`);
      }
      return found;
    };
    // The search finds what it looks for: the keep run's files hold plenty.
    expect((await leaks(keep)).length).toBeGreaterThan(100);
    expect(await leaks(pseudo)).toEqual([]);
    expect(await leaks(again)).toEqual([]);
  });

  /** The latest file of `table` of a run. */
  const latest = (run: Run, table: string): string => join(run.dir, 'snapshots', 'latest', `${table}.parquet`);

  it('gives an applicant the same token in the applications, awards and users snapshots, and in a second run', async () => {
    const apps = await parquetRows(duck, latest(pseudo, 'applications'));
    const awards = await parquetRows(duck, latest(pseudo, 'awards'));
    const users = await parquetRows(duck, latest(pseudo, 'users'));
    const keepApps = await parquetRows(duck, latest(keep, 'applications'));
    const keepUsers = await parquetRows(duck, latest(keep, 'users'));
    const tokenOfApp = new Map(apps.map((a) => [a.id, a.applicant_id]));
    const userTokens = new Set(users.map((u) => u.id));
    // Distinct people, distinct tokens: as many as the keep run has users.
    expect(userTokens.size).toBe(keepUsers.length);
    expect(new Set(apps.map((a) => a.applicant_id)).size).toBe(new Set(keepApps.map((a) => a.applicant_id)).size);
    let checked = 0;
    for (const award of awards) {
      if (award.applicant_id === null || !tokenOfApp.has(award.application_id)) continue;
      expect(award.applicant_id).toBe(tokenOfApp.get(award.application_id));
      expect(userTokens.has(award.applicant_id)).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
    for (const a of apps)
      if (a.applicant_id !== null && a.applicant_id !== undefined) expect(userTokens.has(a.applicant_id)).toBe(true);
    // Tokens look like nothing the site sent, and stay the same in the next run.
    expect([...userTokens].every((t) => typeof t === 'string' && /^pz_/.test(t))).toBe(true);
    const againUsers = await parquetRows(duck, latest(again, 'users'));
    const sorted = (rows: Record<string, string | null>[]): string[] =>
      rows.map((u) => `${u.id} ${u.email} ${u.first_name} ${u.last_name}`).sort();
    expect(sorted(againUsers)).toEqual(sorted(users));
  });

  it('keeps every count and model figure of the keep run', async () => {
    const manifest = (run: Run): Record<string, { rows: number; schema: { name: string }[] }> =>
      (
        JSON.parse(readFileSync(join(run.dir, 'snapshots', '_manifest.json'), 'utf8')) as {
          tables: Record<string, { rows: number; schema: { name: string }[] }>;
        }
      ).tables;
    const kept = manifest(keep);
    const pseudonymised = manifest(pseudo);
    expect(Object.keys(pseudonymised).sort()).toEqual(Object.keys(kept).sort());
    for (const [table, entry] of Object.entries(kept))
      expect(`${table}: ${pseudonymised[table]?.rows}`).toBe(`${table}: ${entry.rows}`);
    // _raw and free text are left out; identifiers stay, as tokens.
    const names = (t: string): string[] => pseudonymised[t]?.schema.map((c) => c.name) ?? [];
    expect(names('applications')).not.toContain('_raw');
    expect(names('application_notes')).not.toContain('content');
    expect(names('users')).toEqual(expect.arrayContaining(['id', 'email']));
    // Every model, cell by cell but for its identifiers (tokens), as a multiset of rows.
    const personal = PersonalColumns.of();
    for (const model of [
      'award_rates',
      'funding_flow',
      'fund_utilization',
      'decision_latency',
      'reviewer_load',
      'review_progress',
      'application_funnel',
    ]) {
      const plainRows = async (run: Run): Promise<string[]> =>
        (await parquetRows(duck, latest(run, model)))
          .map((r) => JSON.stringify(Object.entries(r).filter(([c]) => personal.kind(model, c) === null)))
          .sort();
      expect(await plainRows(pseudo), model).toEqual(await plainRows(keep));
    }
  });

  it('grantflow snapshot writes the same tokens with the key of the last sync, and refuses another key', async () => {
    const dir = join(work.path, 'snapshot-command');
    const args = ['snapshot', ...pseudoWarehouse, '--snapshots', dir, '--personal-data', 'pseudonymize'];
    const wrong = await runCliInProcess(args, { env: { GRANTFLOW_PSEUDONYM_KEY: `${key}-not-the-same` } });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toMatch(/made with another GRANTFLOW_PSEUDONYM_KEY/);
    const right = await runCliInProcess(args, { env: { GRANTFLOW_PSEUDONYM_KEY: key } });
    expect(right.code, right.stderr).toBe(0);
    const sorted = async (file: string): Promise<string[]> =>
      (await parquetRows(duck, file)).map((u) => `${u.id} ${u.email}`).sort();
    expect(await sorted(join(dir, 'latest', 'users.parquet'))).toEqual(await sorted(latest(again, 'users')));
  });
});
