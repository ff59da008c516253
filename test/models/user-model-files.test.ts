/**
 * A user's --models-dir read with the built-in models: what is refused (one line, the config exit code) and how
 * `--select` and `--streams` choose models. No warehouse: these are decided before one is opened.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { existsSync } from 'node:fs';

import { mkdir, rm, writeFile } from 'node:fs/promises';

import { join } from 'node:path';

import {
  checkUpstreamBuilt,
  loadAllModels,
  loadAllSqlTests,
  loadModels,
  loadSqlTests,
  modelsForStreams,
  selectModels,
  selectTests,
} from '../../src/models/index.ts';

import { modelSources } from '../../src/models/lineage.ts';

import { describeSettings } from '../../src/config/describe-settings.ts';

import { loadSettings } from '../../src/config/load-settings.ts';

import { settingsSchema } from '../../src/config/settings.ts';

import { runSync } from '../../src/pipeline/sync.ts';

import { ConfigError, ExitCode } from '../../src/util/errors.ts';

import { silentLogger } from '../../src/util/logger.ts';
import { tables, streamMappings, mappingOf } from '../../src/streams/registry.ts';
import { tempDir } from '../support/temp-dir.ts';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ path: dir, remove: cleanup } = await tempDir('gf-user-model-files-'));
});
afterEach(async () => cleanup());

const put = async (name: string, text: string): Promise<void> => {
  await mkdir(join(dir, name, '..'), { recursive: true });
  await writeFile(join(dir, name), text);
};

/** The ConfigError `fn` throws: exit 2 and a single line. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).exitCode).toBe(ExitCode.usage);
    const message = (e as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('not refused');
}

describe('a user models directory', () => {
  it('adds its models after the built-in ones they read, and its tests after the built-in tests', async () => {
    await put('share.sql', '-- description: d\nSELECT * FROM top_rates\n');
    await put('top_rates.sql', '-- description: d\n-- depends_on: award_rates\nSELECT * FROM award_rates\n');
    await put('tests/share_ok.sql', 'SELECT * FROM share WHERE 1 = 0\n');
    const names = loadAllModels(dir).map((m) => m.name);
    expect(names.length).toBe(loadModels().length + 2);
    expect(names.indexOf('award_rates')).toBeLessThan(names.indexOf('top_rates'));
    expect(names.indexOf('top_rates')).toBeLessThan(names.indexOf('share'));
    const tests = loadAllSqlTests(dir).map((t) => t.name);
    expect(tests).toEqual([...loadSqlTests().map((t) => t.name), 'share_ok']);
  });

  it('needs no tests folder, but must itself exist', async () => {
    await put('m.sql', 'SELECT 1 AS x\n');
    expect(loadAllSqlTests(dir)).toHaveLength(loadSqlTests().length);
    expect(refusal(() => loadAllModels(join(dir, 'missing')))).toMatch(/cannot read the models directory .*missing/);
  });

  it.each([
    ['a built-in model', 'award_rates.sql', 'SELECT 1 AS x\n', /has the name of a built-in model \(award_rates\)/],
    ['a warehouse table', 'applications.sql', 'SELECT 1 AS x\n', /has the name of a warehouse table \(applications\)/],
    [
      'a bad column line',
      'm.sql',
      '-- column total money: x\nSELECT 1 AS x\n',
      /column total has unknown type "money"/,
    ],
    ['a column line without a type', 'm.sql', '-- column total: x\nSELECT 1 AS x\n', /bad header line/],
    ['an unknown header key', 'm.sql', '-- depnds_on: award_rates\nSELECT 1 AS x\n', /unknown header key "depnds_on"/],
    ['an unknown dependency', 'm.sql', '-- depends_on: nothing_here\nSELECT 1 AS x\n', /depends on unknown model/],
    ['a name not in lower_snake_case', 'My-Model.sql', 'SELECT 1 AS x\n', /lower_snake_case/],
    ['no statement', 'm.sql', '-- description: only a header\n', /has no SQL statement/],
  ])('refuses %s', async (_what, file, text, message) => {
    await put(file, text);
    expect(refusal(() => loadAllModels(dir))).toMatch(message);
  });

  it('refuses a cycle, naming its models', async () => {
    await put('a_model.sql', 'SELECT * FROM b_model\n');
    await put('b_model.sql', 'SELECT * FROM a_model\n');
    expect(refusal(() => loadAllModels(dir))).toMatch(
      /cycle: (a_model -> b_model -> a_model|b_model -> a_model -> b_model)/,
    );
  });

  it('refuses a data test named like a built-in one, or with a bad severity', async () => {
    const builtIn = loadSqlTests()[0]?.name ?? '';
    await put(`tests/${builtIn}.sql`, 'SELECT 1 AS x WHERE 1 = 0\n');
    expect(refusal(() => loadAllSqlTests(dir))).toContain(`built-in data test (${builtIn})`);
    await rm(join(dir, 'tests', `${builtIn}.sql`));
    await put('tests/mine.sql', '-- severity: fatal\nSELECT 1 AS x WHERE 1 = 0\n');
    expect(refusal(() => loadAllSqlTests(dir))).toMatch(/severity must be error or warn/);
  });

  it('makes a sync exit 2 before anything is written', async () => {
    await put('award_rates.sql', 'SELECT 1 AS x\n');
    const warehouse = join(dir, 'w.duckdb');
    const settings = settingsSchema.parse({
      site: 'http://127.0.0.1:9',
      credentials: join(dir, 'none.json'),
      warehouse,
      modelsDir: dir,
      snapshot: false,
      landRaw: false,
    });
    const sync = runSync({ settings, logger: silentLogger, env: {}, tty: false });
    await expect(sync).rejects.toThrow(/has the name of a built-in model/);
    await expect(sync).rejects.toBeInstanceOf(ConfigError);
    expect(existsSync(warehouse)).toBe(false);
  });

  it('is a pipeline-file setting, resolved against the file and shown by `grantflow config`', async () => {
    const pipeline = join(dir, 'pipeline.json');
    await writeFile(pipeline, JSON.stringify({ modelsDir: 'my-models' }));
    const settings = await loadSettings({}, { pipeline, env: {} });
    expect(settings.modelsDir).toBe(join(dir, 'my-models'));
    const line = describeSettings(settings, {}, pipeline).find((l) => l.key === 'modelsDir');
    expect(line).toEqual({ key: 'modelsDir', value: join(dir, 'my-models'), from: `pipeline file ${pipeline}` });
  });
});

describe('choosing models', () => {
  const all = loadAllModels();

  it('--select keeps dependency order and lists the known models for an unknown name', () => {
    const names = all.map((m) => m.name);
    const picked = [names[names.length - 1] ?? '', names[0] ?? ''];
    expect(selectModels(all, picked).map((m) => m.name)).toEqual([names[0], names[names.length - 1]]);
    const message = refusal(() => selectModels(all, ['award_rates', 'nope']));
    expect(message).toMatch(/^unknown model nope; known models: /);
    for (const n of names) expect(message).toContain(n);
  });

  it('a selected model whose upstream model is neither selected nor built is refused', async () => {
    await put('top_rates.sql', 'SELECT * FROM award_rates\n');
    const models = loadAllModels(dir);
    const chosen = selectModels(models, ['top_rates']);
    expect(refusal(() => checkUpstreamBuilt(chosen, new Set()))).toMatch(
      /model top_rates reads award_rates, which is not built yet/,
    );
    expect(() => checkUpstreamBuilt(chosen, new Set(['award_rates']))).not.toThrow();
    expect(() => checkUpstreamBuilt(selectModels(models, ['top_rates', 'award_rates']), new Set())).not.toThrow();
  });

  it('models test --select picks the SQL tests reading a model, or a test by name', async () => {
    await put('top_rates.sql', 'SELECT * FROM award_rates\n');
    await put('tests/top_ok.sql', 'SELECT * FROM top_rates t JOIN programs p ON p.id = t.program_id WHERE 1 = 0\n');
    await put('tests/other.sql', 'SELECT * FROM programs WHERE 1 = 0\n');
    const models = loadAllModels(dir);
    const tests = loadAllSqlTests(dir);
    expect(selectTests(['top_rates'], models, tests).map((t) => t.name)).toEqual(['top_ok']);
    expect(selectTests(['other'], models, tests).map((t) => t.name)).toEqual(['other']);
    expect(refusal(() => selectTests(['nope'], models, tests))).toMatch(
      /known models: .*top_rates.*known data tests: .*other/,
    );
  });

  it('--streams rebuilds the models reading what the streams own or reference, their dependants, and unbuilt ones', () => {
    const built = new Set(all.map((m) => m.name));
    const known = new Set([...tables.map((t) => t.name), ...built]);
    for (const stream of ['funds', 'assignments', 'report_downloads']) {
      const owned = new Set<string>(mappingOf(stream as keyof typeof streamMappings).owns.map((o) => o.table));
      const { rebuild, skipped } = modelsForStreams(all, [stream], built);
      // Each model reading a table the stream owns is rebuilt; every model is either rebuilt or skipped.
      for (const m of all)
        if (modelSources(m, known).some((t) => owned.has(t))) expect(rebuild.map((r) => r.name)).toContain(m.name);
      expect([...rebuild.map((m) => m.name), ...skipped].sort()).toEqual([...built].sort());
    }
    // Nothing built yet: every model is built, whatever the streams.
    expect(modelsForStreams(all, ['report_downloads'], new Set()).skipped).toEqual([]);
  });
});
