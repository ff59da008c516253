/**
 * A model that shows codes shows their labels too: a header column declared `enum <name>` gets `<col>_label` right
 * after it, in the table, its comments and the dictionary's columns, on both engines; an unknown enum is refused.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModels, modelTableDefs, runModels } from '../../src/models/index.ts';
import { enums } from '../../src/normalize/enums.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { catalogComments } from '../support/catalog-comments.ts';
import { load, openTestWarehouse } from '../support/model-fixtures.ts';
import { tempDir } from '../support/temp-dir.ts';

const model = `-- description: Applications by state.
-- column state integer enum application_state: State of the applications.
-- column applications bigint: How many.
SELECT state, count(*) AS applications FROM applications GROUP BY state
`;

let dir: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir('gf-model-labels-');
  await writeFile(join(dir.path, 'applications_by_state.sql'), model);
});
afterAll(async () => {
  await dir?.remove();
});

it('declares the label column right after the code, described', () => {
  const [def] = modelTableDefs(loadModels(dir.path));
  expect(def?.columns.map((c) => [c.name, c.type])).toEqual([
    ['state', 'integer'],
    ['state_label', 'text'],
    ['applications', 'bigint'],
  ]);
  expect(def?.columns[1]?.description).toContain('Label of state');
});

it('refuses an enum it does not know', async () => {
  const bad = await tempDir('gf-model-labels-bad-');
  try {
    await writeFile(join(bad.path, 'm.sql'), model.replace('application_state', 'no_such_enum'));
    expect(() => loadModels(bad.path)).toThrow(ConfigError);
  } finally {
    await bad.remove();
  }
});

describe.each(['duckdb', 'postgres'] as const)('a model with an enum column (%s)', (dialect) => {
  it('holds the label of each code, the code as text for one the spec lacks', async () => {
    const t = await openTestWarehouse(dialect, 'model_labels');
    try {
      const states = [0, 0, 3, 9];
      await load(t.warehouse, {
        programs: [{ id: 1, name: 'P' }],
        applications: states.map((state, i) => ({ id: i + 1, program_id: 1, state })),
      });
      await runModels(t.warehouse, { dir: dir.path });
      const rows = await t.warehouse.query(
        `SELECT state, state_label, applications FROM ${t.warehouse.qualifyModel('applications_by_state')} ORDER BY state`,
      );
      const labels: Record<number, string> = enums.application_state;
      const expected = [...new Set(states)].map((state) => ({
        state,
        state_label: labels[state] ?? String(state),
        applications: states.filter((s) => s === state).length,
      }));
      expect(rows).toEqual(expected);
      const comments = await catalogComments(t.warehouse, t.warehouse.analyticsSchema);
      const of = (column: string | null) =>
        comments.find((d) => d.table === 'applications_by_state' && d.column === column)?.comment;
      expect(of(null)).toBe('Applications by state.');
      expect(of('state')).toMatch(/^State of the applications\. Enum application_state: 0 Active/);
      expect(of('state_label')).toContain('Label of state');
    } finally {
      await t.cleanup();
    }
  });
});
