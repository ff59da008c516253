import { execFile } from 'node:child_process';

import { readFileSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';

import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { dictionaryPath, renderDataDictionary } from '../../src/docs/data-dictionary.ts';

import { loadModels } from '../../src/models/index.ts';

import { bookkeepingTables } from '../../src/warehouse/bookkeeping-tables.ts';

import { tables } from '../../src/streams/registry.ts';
import { countCliStart } from '../support/cli-count.ts';
import { tempDir } from '../support/temp-dir.ts';
import { openTestWarehouse } from '../support/model-fixtures.ts';
import { cliPath } from '../../src/util/package-root.ts';

const execFileP = promisify(execFile);

/** `grantflow <args>`, counted with the suite's other CLI starts. */
function run(file: string, args: readonly string[]): ReturnType<typeof execFileP> {
  countCliStart();
  return execFileP(file, args);
}

describe('data dictionary', () => {
  it('the committed docs/data-dictionary.md is up to date (run `grantflow docs dictionary`)', () => {
    expect(readFileSync(dictionaryPath, 'utf8')).toBe(renderDataDictionary());
  });

  it('lists every table and column of the catalog and of the models', () => {
    const text = renderDataDictionary();
    for (const t of tables) {
      expect(text).toContain(`### ${t.name}\n`);
      for (const c of t.columns) expect(text).toContain(`| \`${c.name}\` |`);
    }
    for (const m of loadModels()) {
      expect(text).toContain(`### ${m.name}\n`);
      expect(m.columns.length).toBeGreaterThan(0);
      for (const c of m.columns) expect(text).toContain(`| \`${c.name}\` | ${c.type} (${c.sqlType}`);
    }
    expect(text).toContain(
      '| `state` | integer (INTEGER / INTEGER) |  |  | `application_state`: 0 Active, 1 Locked, 2 Hidden, 3 Archived, 4 Trashed |',
    );
    expect(text).toContain('| `applicant_id` | bigint (BIGINT / BIGINT) |  | users.id |');
  });

  it("lists each model's inclusion rules, every `-- includes:` line of its header in order", () => {
    const text = renderDataDictionary();
    for (const m of loadModels()) {
      // Read from the file here, not through the parser under test.
      const rules = readFileSync(m.file, 'utf8')
        .split('\n')
        .flatMap((line) => /^--\s*includes:\s*(.+)$/.exec(line.trim())?.[1] ?? []);
      expect(rules.length, m.name).toBeGreaterThan(0);
      const section = text.slice(text.indexOf(`### ${m.name}\n`));
      const listed = section.slice(section.indexOf('Includes:\n\n') + 'Includes:\n\n'.length).split('\n\n')[0];
      expect(listed, m.name).toBe(rules.map((r) => `- ${r}`).join('\n'));
    }
  });

  it('lists the views of current rows, one per table with `_deleted_at`', () => {
    const text = renderDataDictionary();
    for (const t of tables.filter((x) => ['entity', 'dimension', 'bridge'].includes(x.kind)))
      expect(text).toContain(`| \`${t.name}_current\` | \`${t.name}\` |`);
  });

  it('documents every bookkeeping table the migrations create, with their columns as created', async () => {
    const { warehouse, cleanup } = await openTestWarehouse('duckdb', 'dict');
    try {
      const created = await warehouse.query(
        "SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_name LIKE '\\_grantflow\\_%' ESCAPE '\\' ORDER BY table_name, ordinal_position",
      );
      const documented = [...tables.filter((t) => t.kind === 'bookkeeping'), ...bookkeepingTables].flatMap((t) =>
        t.columns.map((c) => ({ table_name: t.name, column_name: c.name, is_nullable: c.notNull ? 'NO' : 'YES' })),
      );
      const kysely = /^_grantflow_migrations/;
      expect(documented.sort(byTableThenOrder(created))).toEqual(
        created.filter((r) => !kysely.test(String(r.table_name))),
      );
      const text = renderDataDictionary();
      for (const t of bookkeepingTables) expect(text).toContain(`### ${t.name}\n`);
    } finally {
      await cleanup();
    }
  });

  it('`docs dictionary --check` exits 1 on a stale file and 0 once regenerated', async () => {
    const { path: dir, remove: cleanup } = await tempDir('gf-dict-');
    const out = join(dir, 'dictionary.md');
    try {
      writeFileSync(out, '# stale\n');
      const stale = await run('node', [cliPath, 'docs', 'dictionary', '--check', '--out', out]).catch(
        (e: { code: number; stderr: string }) => e,
      );
      expect(stale).toMatchObject({ code: 1 });
      expect((stale as { stderr: string }).stderr).toMatch(/is stale; run `grantflow docs dictionary`/);
      await run('node', [cliPath, 'docs', 'dictionary', '--out', out]);
      expect(readFileSync(out, 'utf8')).toBe(renderDataDictionary());
      const fresh = await run('node', [cliPath, 'docs', 'dictionary', '--check', '--out', out]);
      expect(fresh.stdout).toMatch(/up to date/);
    } finally {
      await cleanup();
    }
  });
});

/** Sorts documented columns into the order the warehouse lists them (by table, then position). */
function byTableThenOrder(created: readonly Record<string, unknown>[]) {
  const position = new Map(created.map((r, i) => [`${String(r.table_name)}.${String(r.column_name)}`, i]));
  const at = (r: { table_name: string; column_name: string }) =>
    position.get(`${r.table_name}.${r.column_name}`) ?? Number.MAX_SAFE_INTEGER;
  return (a: { table_name: string; column_name: string }, b: { table_name: string; column_name: string }) =>
    at(a) - at(b);
}
