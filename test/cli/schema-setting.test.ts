/**
 * `--schema` with a DuckDB warehouse: read by the commands that read a portfolio site's schema (status, report,
 * query), refused by every other (which would ignore it), and shown by `config` for what it does, folded to 80 columns.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingsTable } from '../../src/cli/commands/config.ts';
import { settingsFrom } from '../../src/cli/settings-options.ts';
import { describeSettings } from '../../src/config/describe-settings.ts';
import { loadSettings } from '../../src/config/load-settings.ts';
import { warehouseSettingKeys } from '../../src/config/settings.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { tempDir } from '../support/temp-dir.ts';

const keys = [...warehouseSettingKeys];
let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir('grantflow-schema-setting-');
});
afterAll(async () => {
  await dir.remove();
});

describe('--schema with a DuckDB warehouse', () => {
  it('is refused, in one line naming where it came from, by a command that would ignore it (sync)', async () => {
    const flag = settingsFrom({ warehouse: 'x.duckdb', schema: 'foo' }, keys);
    await expect(flag).rejects.toBeInstanceOf(ConfigError);
    await expect(flag).rejects.toThrow(/^--schema names a Postgres schema, and \S*\/x\.duckdb is a DuckDB file/);
    const pipeline = join(dir.path, 'pipeline.json');
    await writeFile(pipeline, JSON.stringify({ warehouse: 'x.duckdb', schema: 'foo' }));
    await expect(settingsFrom({ pipeline }, keys)).rejects.toThrow(/^"schema" in the pipeline file names a Postgres/);
  });

  it('is kept for Postgres, and for the commands that read a schema of the file', async () => {
    const postgres = await settingsFrom({ warehouse: 'postgres://db/x', schema: 'foo' }, keys);
    expect(postgres.schema).toBe('foo');
    const reader = await settingsFrom({ warehouse: 'x.duckdb', schema: 'site_north' }, keys, undefined, false, true);
    expect(reader.schema).toBe('site_north');
    // Without --schema nothing is refused: the default is not a choice the user made.
    expect((await settingsFrom({ warehouse: 'x.duckdb' }, keys)).warehouse).toMatch(/x\.duckdb$/);
  });

  it('config does not show the default as set, and says who reads a schema given', async () => {
    const line = async (flags: Record<string, unknown>) =>
      describeSettings(await loadSettings(flags, { env: {} }), {}, undefined).find((l) => l.key === 'schema');
    expect(await line({ warehouse: 'x.duckdb' })).toEqual({
      key: 'schema',
      value: '(not used: a DuckDB file)',
      from: 'default',
    });
    expect(await line({ warehouse: 'x.duckdb', schema: 'site_north' })).toEqual({
      key: 'schema',
      value: 'site_north',
      from: 'flag --schema (DuckDB: only status, report and query read it)',
    });
    expect(await line({ warehouse: 'postgres://db/x' })).toEqual({ key: 'schema', value: 'public', from: 'default' });
  });
});

describe('config at 80 columns', () => {
  it('folds long values and origins so no line is wider, and loses nothing', async () => {
    const pipeline = join(dir.path, 'a-pipeline-file-with-a-rather-long-name-in-a-deep-folder.json');
    const promote = [{ stream: 'applications', path: 'extra.score', column: 'score', type: 'integer' }];
    await writeFile(pipeline, JSON.stringify({ promote, warehouse: 'x.duckdb' }));
    const settings = await loadSettings({}, { pipeline, env: {} });
    const lines = describeSettings(settings, {}, pipeline);
    const table = settingsTable(lines, 79);
    for (const row of table) expect([...row].length, row).toBeLessThanOrEqual(79);
    const promoteAt = table.findIndex((row) => row.startsWith('promote '));
    const valueAt = table[0]!.indexOf('value');
    const fromAt = table[0]!.indexOf('from');
    const folded = table.slice(promoteAt).filter((row, i) => i === 0 || row.startsWith(' '));
    expect(folded.length).toBeGreaterThan(1);
    expect(folded.map((row) => row.slice(valueAt, fromAt).trim()).join('')).toBe(JSON.stringify(promote));
    expect(folded.map((row) => row.slice(fromAt).trim()).join('')).toBe(`pipeline file ${pipeline}`);
    // Not a terminal: one line per setting, as before.
    expect(settingsTable(lines, undefined)).toHaveLength(lines.length + 1);
  });
});
