/**
 * `grantflow docs dbt --out DIR` writes a dbt sources.yml that parses as YAML and lists every table (bookkeeping
 * aside) and model, every column with its description, `unique` and `not_null` on keys, `relationships` on every
 * reference column and `accepted_values` on every enum column, as the catalog declares them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { dictionaryColumns } from '../../src/docs/data-dictionary.ts';
import { loadModels, modelTableDefs } from '../../src/models/index.ts';
import { enums, type EnumName } from '../../src/normalize/enums.ts';
import type { TableDef } from '../../src/normalize/table-def.ts';
import { tables } from '../../src/streams/registry.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { tempDir } from '../support/temp-dir.ts';

type Test = string | Record<string, Record<string, unknown>>;
interface Column {
  name: string;
  description: string;
  data_tests?: Test[];
}
interface Table {
  name: string;
  description: string;
  data_tests?: Test[];
  columns: Column[];
}
interface Source {
  name: string;
  schema: string;
  tables: Table[];
}

let work: { path: string; remove: () => Promise<void> };
let sources: Source[];

beforeAll(async () => {
  work = await tempDir('grantflow-dbt-');
  const result = await runCliInProcess(['docs', 'dbt', '--out', join(work.path, 'models')]);
  expect(result.code, result.stderr).toBe(0);
  sources = (parse(readFileSync(join(work.path, 'models', 'sources.yml'), 'utf8')) as { sources: Source[] }).sources;
});
afterAll(async () => {
  await work?.remove();
});

const named = (tests: Test[] | undefined, name: string): Record<string, unknown>[] =>
  (tests ?? []).flatMap((t) => (typeof t === 'string' ? (t === name ? [{}] : []) : t[name] ? [t[name]] : []));

function check(source: Source, expected: readonly TableDef[]): void {
  expect(source.tables.map((t) => t.name)).toEqual(expected.map((t) => t.name));
  for (const def of expected) {
    const table = source.tables.find((t) => t.name === def.name)!;
    expect(table.description, def.name).toBe(def.description);
    const columns = dictionaryColumns(def);
    expect(
      table.columns.map((c) => c.name),
      def.name,
    ).toEqual(columns.map((c) => c.name));
    for (const c of columns) {
      const got = table.columns.find((col) => col.name === c.name)!;
      const where = `${def.name}.${c.name}`;
      expect(got.description.startsWith(c.description.trim()), where).toBe(true);
      if (def.primaryKey.includes(c.name)) expect(named(got.data_tests, 'not_null'), where).toHaveLength(1);
      if (def.primaryKey.length === 1 && def.primaryKey[0] === c.name)
        expect(named(got.data_tests, 'unique'), where).toHaveLength(1);
      if (c.references && expected.some((t) => t.name === c.references?.table)) {
        expect(named(got.data_tests, 'relationships'), where).toEqual([
          expect.objectContaining({
            to: `source('${source.name}', '${c.references.table}')`,
            field: c.references.column,
          }),
        ]);
      }
      if (c.enum !== undefined) {
        const [accepted] = named(got.data_tests, 'accepted_values');
        const codes = Object.keys(enums[c.enum as EnumName]);
        expect((accepted?.values as unknown[]).map(String), where).toEqual(codes);
      }
    }
    if (def.primaryKey.length > 1) {
      const [unique] = named(table.data_tests, 'unique');
      for (const k of def.primaryKey) expect(String(unique?.column_name), def.name).toContain(k);
    }
  }
}

describe('grantflow docs dbt', () => {
  it('lists every table with its columns, keys, references and enums', () => {
    const [core] = sources;
    expect(core?.schema).toContain('main');
    check(
      core!,
      tables.filter((t) => t.kind !== 'bookkeeping'),
    );
    const referencing = core!.tables
      .flatMap((t) => t.columns)
      .filter((c) => named(c.data_tests, 'relationships').length);
    expect(referencing.length).toBe(
      tables.flatMap((t) => (t.kind === 'bookkeeping' ? [] : t.columns)).filter((c) => c.references).length,
    );
  });

  it('lists every model with its columns in the analytics schema', () => {
    const models = sources[1];
    expect(models?.schema).toContain('analytics');
    check(models!, modelTableDefs(loadModels()));
  });

  it('says when the file is stale (--check), and names the schema asked for', async () => {
    const out = join(work.path, 'models');
    const fresh = await runCliInProcess(['docs', 'dbt', '--out', out, '--check']);
    expect(fresh.code, fresh.stderr).toBe(0);
    const other = join(work.path, 'pg');
    const wrote = await runCliInProcess(['docs', 'dbt', '--out', other, '--schema', 'grants']);
    expect(wrote.code, wrote.stderr + wrote.stdout).toBe(0);
    const [core, models] = (parse(readFileSync(join(other, 'sources.yml'), 'utf8')) as { sources: Source[] }).sources;
    expect(core?.schema).toContain("'grants'");
    expect(models?.schema).toContain("'grants_analytics'");
    expect((await runCliInProcess(['docs', 'dbt', '--out', other, '--check', '--schema', 'grants'])).code).toBe(0);
    expect((await runCliInProcess(['docs', 'dbt', '--out', out, '--check', '--schema', 'grants'])).code).toBe(1);
  });
});
