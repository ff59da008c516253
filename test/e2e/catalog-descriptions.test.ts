/**
 * What BI tools read from the engine's catalog after a sync (as `npm run demo` runs one), on both engines: a comment
 * on every table, view and column of the warehouse's schema and of its models' (grantflow's `_grantflow_*`
 * bookkeeping aside), equal to what docs/data-dictionary.md says of it; and a `<col>_label` beside every enum code
 * of each `_current` view, the spec's label of the code (as `enum_labels` holds it) or the code as text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dictionaryPath } from '../../src/docs/data-dictionary.ts';
import type { SimulatorHandle } from '../../src/simulator/index.ts';
import { tables } from '../../src/streams/registry.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/index.ts';
import { catalogComments } from '../support/catalog-comments.ts';
import { renderDbtSources } from '../../src/docs/dbt-sources.ts';
import { parse } from 'yaml';
import { postgresSchema, startSite, syncOnce, tempDir, writeCredentials } from '../support/harness.ts';

/** docs/data-dictionary.md read back: per table, its description and each column's description, references, enum. */
function dictionary(): Map<string, { description: string; columns: Map<string, string[]> }> {
  const text = readFileSync(dictionaryPath, 'utf8');
  const out = new Map<string, { description: string; columns: Map<string, string[]> }>();
  const unescape = (s: string): string => s.replace(/\\\|/g, '|').trim();
  for (const whole of text.split('\n### ').slice(1)) {
    const section = whole.split('\n## ')[0] ?? '';
    const [name = '', , description = ''] = section.split('\n');
    const columns = new Map<string, string[]>();
    for (const line of section.split('\n')) {
      const m = /^\| `([^`]+)` \|(.*)\|$/.exec(line);
      if (!m) continue;
      const cells = (m[2] ?? '').split(/(?<!\\)\|/).map(unescape);
      columns.set(m[1] ?? '', cells);
    }
    out.set(name.trim(), { description: unescape(description), columns });
  }
  return out;
}

type DbtTest = string | Record<string, Record<string, unknown>>;
interface DbtSource {
  name: string;
  tables: { name: string; data_tests?: DbtTest[]; columns: { name: string; data_tests?: DbtTest[] }[] }[];
}

let sim: SimulatorHandle;
let work: { path: string; remove: () => Promise<void> };
const drops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sim = await startSite({ scale: 'tiny', seed: 41 });
  work = await tempDir('grantflow-descriptions-');
});
afterAll(async () => {
  for (const drop of drops) await drop();
  await sim?.close();
  await work?.remove();
});

describe.each(['duckdb', 'postgres'] as const)('the catalog after a sync (%s)', (dialect) => {
  let w: Warehouse;
  /** The warehouse's own schema: DuckDB's `main`, or the test's Postgres schema. */
  let own = 'main';

  beforeAll(async () => {
    const credentials = await writeCredentials(sim, join(work.path, `${dialect}.json`));
    let target = join(work.path, 'warehouse.duckdb');
    let schema: string | undefined;
    if (dialect === 'postgres') {
      const pgSchema = await postgresSchema();
      drops.push(pgSchema.drop);
      target = pgSchema.url;
      schema = pgSchema.schema;
      own = schema;
    }
    const result = await syncOnce(sim, { credentials, warehouse: target, ...(schema ? { schema } : {}) });
    expect(result.status).toBe('succeeded');
    w = await openWarehouse(target, { logger: silentLogger, existingOnly: true, ...(schema ? { schema } : {}) });
  }, 180_000);
  afterAll(async () => {
    await w?.close();
  });

  it('has a comment on every table, view and column of the warehouse and its models', async () => {
    const main = await catalogComments(w, own);
    const models = await catalogComments(w, w.analyticsSchema);
    expect(main.length).toBeGreaterThan(1000);
    expect(models.length).toBeGreaterThan(50);
    const missing = [...main, ...models].filter((d) => d.comment === null || d.comment.trim() === '');
    expect(missing.map((d) => `${d.table}.${d.column ?? ''}`)).toEqual([]);
  });

  it('says what the data dictionary says of each table, model and column', async () => {
    const dict = dictionary();
    const main = await catalogComments(w, own);
    const models = await catalogComments(w, w.analyticsSchema);
    let compared = 0;
    for (const d of [...main, ...models]) {
      const entry = dict.get(d.table);
      if (entry === undefined) continue; // a `_current` view: checked below against its table
      if (d.column === null) {
        expect(d.comment, d.table).toBe(entry.description);
        continue;
      }
      // type, key, references, enum, ..., description (the last cell: columns may be added between).
      const cells = entry.columns.get(d.column) ?? [];
      const [, , references = '', enumCell = ''] = cells;
      const description = cells.at(-1) ?? '';
      expect(entry.columns.has(d.column), `${d.table}.${d.column} in the dictionary`).toBe(true);
      expect(d.comment?.startsWith(description), `${d.table}.${d.column}: ${d.comment}`).toBe(true);
      if (references !== '') expect(d.comment).toContain(references);
      // The enum cell lists `name`: code label, ...: each pair is in the comment.
      for (const pair of enumCell
        .replace(/^`[^`]*`: /, '')
        .split(', ')
        .filter(Boolean))
        expect(d.comment, `${d.table}.${d.column}`).toContain(pair);
      compared++;
    }
    // And the other way round: every column the dictionary lists of a table the warehouse has was compared.
    const present = new Set([...main, ...models].map((d) => d.table));
    const listed = [...dict].filter(([name]) => present.has(name)).reduce((n, [, e]) => n + e.columns.size, 0);
    expect(compared).toBe(listed);
    // Each view of current rows: its table's columns say the same there.
    const byKey = new Map(main.map((d) => [`${d.table}.${d.column ?? ''}`, d.comment]));
    for (const d of main.filter((o) => o.table.endsWith('_current') && o.column !== null)) {
      const table = d.table.replace(/_current$/, '');
      if (d.column?.endsWith('_label') && !byKey.has(`${table}.${d.column}`)) {
        expect(d.comment).toContain(`Label of ${d.column.replace(/_label$/, '')}`);
      } else expect(d.comment, `${d.table}.${d.column}`).toBe(byKey.get(`${table}.${d.column}`));
    }
  });

  it("gives every enum code of a `_current` view its label: the spec's, or the code as text", async () => {
    let checked = 0;
    for (const t of tables) {
      if (t.kind === 'bookkeeping' || t.kind === 'model') continue;
      for (const c of t.columns.filter((col) => col.enum !== undefined)) {
        const view = `${t.name}_current`;
        const code = `v."${c.name}"`;
        // enum_labels, as the sync loaded it, is the spec's list: joined here on the code as text.
        const rows = await w.query(
          `SELECT CAST(${code} AS ${w.dialect === 'duckdb' ? 'VARCHAR' : 'TEXT'}) AS code, v."${c.name}_label" AS label, l.label AS spec
             FROM ${view} v LEFT JOIN enum_labels l ON l.enum = $1 AND l.value = CAST(${code} AS ${w.dialect === 'duckdb' ? 'VARCHAR' : 'TEXT'})`,
          [c.enum ?? ''],
        );
        for (const r of rows) {
          expect(r.label, `${view}.${c.name}_label of ${String(r.code)}`).toBe(r.spec ?? r.code);
          if (r.code !== null) checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    const [active] = await w.query(`SELECT state_label FROM applications_current WHERE state = 0 LIMIT 1`);
    expect(active?.state_label).toBe('Active');
  });
  it('passes the tests of its dbt sources.yml, which names every table and column it has', async () => {
    const yaml = renderDbtSources({ schema: own, analyticsSchema: w.analyticsSchema });
    const { sources } = parse(yaml) as { sources: DbtSource[] };
    const q = (name: string): string => `"${name}"`;
    const failing: string[] = [];
    let ran = 0;
    for (const source of sources) {
      const schema = source.name === 'grantflow' ? own : w.analyticsSchema;
      const at = (table: string): string => `${q(schema)}.${q(table)}`;
      for (const table of source.tables) {
        // Every column listed exists: the select binds.
        await w.query(`SELECT ${table.columns.map((c) => q(c.name)).join(', ')} FROM ${at(table.name)} WHERE 1 = 0`);
        const cases: [string, DbtTest, string][] = [
          ...(table.data_tests ?? []).map((t): [string, DbtTest, string] => ['', t, table.name]),
          ...table.columns.flatMap((c) =>
            (c.data_tests ?? []).map((t): [string, DbtTest, string] => [c.name, t, table.name]),
          ),
        ];
        for (const [column, test] of cases) {
          const [kind, args = {}] = typeof test === 'string' ? [test, {}] : Object.entries(test)[0]!;
          const config = (args.config ?? {}) as { where?: string; severity?: string };
          const from = `(SELECT * FROM ${at(table.name)}${config.where ? ` WHERE ${config.where}` : ''}) t`;
          const col = column === '' ? String(args.column_name) : q(column);
          // As dbt compiles its generic tests: each query returns the failing rows.
          const sql =
            kind === 'not_null'
              ? `SELECT * FROM ${from} WHERE ${col} IS NULL`
              : kind === 'unique'
                ? `SELECT ${col} FROM ${from} WHERE ${col} IS NOT NULL GROUP BY ${col} HAVING count(*) > 1`
                : kind === 'relationships'
                  ? `SELECT c.v FROM (SELECT ${col} AS v FROM ${from} WHERE ${col} IS NOT NULL) c LEFT JOIN (SELECT ${q(String(args.field))} AS v FROM ${at(/'([^']+)'\)$/.exec(String(args.to))?.[1] ?? '')}) p ON c.v = p.v WHERE p.v IS NULL`
                  : `SELECT ${col} FROM ${from} WHERE ${col} IS NOT NULL AND CAST(${col} AS TEXT) NOT IN (${(args.values as unknown[]).map((v) => `'${String(v)}'`).join(', ')})`;
          const rows = await w.query(sql);
          ran++;
          if (rows.length > 0 && config.severity !== 'warn') failing.push(`${kind} ${table.name}.${column}`);
        }
      }
    }
    expect(failing).toEqual([]);
    expect(ran).toBeGreaterThan(300);
  });
});
