/**
 * The labels of `_current` views and the comments the migration keeps, on both engines: a code the spec has no
 * label for reads as the code as text (NULL only for a NULL code); a view an older version made (`SELECT *`, no
 * labels) gets its labels on upgrade, and on Postgres a view an analyst built on it survives; a description changed
 * in the catalog reaches the comment at the next migration.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { enums } from '../../src/normalize/enums.ts';
import type { TableDef } from '../../src/normalize/table-def.ts';
import { catalogComments } from '../support/catalog-comments.ts';
import { bothDialects, harness, type Harness } from '../support/warehouse-fixtures.ts';

const cleanups: Harness[] = [];
afterAll(async () => {
  for (const h of cleanups) await h.cleanup();
});

const jobs = (stateDescription = 'State of the job.'): TableDef[] => [
  {
    name: 'jobs',
    description: 'Jobs, each in a state.',
    kind: 'entity',
    primaryKey: ['id'],
    columns: [
      { name: 'id', type: 'bigint', notNull: true, description: 'Job id.' },
      { name: 'state', type: 'integer', enum: 'application_state', description: stateDescription },
      { name: 'target', type: 'text', enum: 'custom_field_target', description: 'What the job is about.' },
    ],
  },
];

const insert = (id: number, state: string, target: string): string =>
  `INSERT INTO jobs (id, state, target, _raw, _extracted_at, _run_id, _ref_only) VALUES (${id}, ${state}, ${target}, '{}', CAST('2024-01-01T00:00:00Z' AS TIMESTAMPTZ), 'r', false)`;

describe.each(bothDialects)('the labels and comments of a view of current rows (%s)', (dialect) => {
  it('labels known codes as the spec does, unknown ones as the code, NULL as NULL', async () => {
    const h = await harness(dialect, 'labels');
    cleanups.push(h);
    const w = await h.open();
    try {
      await w.migrate(jobs());
      await w.exec(insert(1, '0', `'application'`));
      await w.exec(insert(2, '99', `'somewhere'`));
      await w.exec(insert(3, 'NULL', 'NULL'));
      const rows = await w.query('SELECT id, state_label, target_label FROM jobs_current ORDER BY id');
      expect(rows).toEqual([
        { id: 1, state_label: enums.application_state[0], target_label: enums.custom_field_target.application },
        { id: 2, state_label: '99', target_label: 'somewhere' },
        { id: 3, state_label: null, target_label: null },
      ]);
      const columns = await w.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'jobs_current' ${h.schema ? `AND table_schema = '${h.schema}'` : ''} ORDER BY ordinal_position`,
      );
      // A fresh view has each label right after its code.
      expect(columns.map((c) => c.column_name).slice(0, 5)).toEqual([
        'id',
        'state',
        'state_label',
        'target',
        'target_label',
      ]);
    } finally {
      await w.close();
    }
  });

  it('adds the labels to a view an older version made, keeping views built on it', async () => {
    const h = await harness(dialect, 'upgrade');
    cleanups.push(h);
    const w = await h.open();
    const schema = h.schema ?? 'main';
    try {
      await w.migrate(jobs());
      // As an older version left it: every column of the table, no label; and an analyst's view on top.
      await w.exec(`DROP VIEW jobs_current`);
      await w.exec(`CREATE VIEW jobs_current AS SELECT * FROM jobs WHERE _deleted_at IS NULL`);
      await w.exec(`CREATE VIEW analyst_jobs AS SELECT id, state FROM jobs_current`);
      await w.exec(`DELETE FROM _grantflow_catalog`);
      await w.exec(insert(1, '3', `'program'`));
      await w.migrate(jobs());
      expect(await w.query('SELECT state_label, target_label FROM jobs_current')).toEqual([
        { state_label: enums.application_state[3], target_label: enums.custom_field_target.program },
      ]);
      expect(await w.query('SELECT id, state FROM analyst_jobs')).toEqual([{ id: 1, state: 3 }]);
      const comments = await catalogComments(w, schema);
      expect(comments.find((d) => d.table === 'jobs_current' && d.column === 'state_label')?.comment).toContain(
        'Label of state',
      );
    } finally {
      await w.close();
    }
  });

  it('carries a changed description to its comment, and leaves them be when nothing changed', async () => {
    const h = await harness(dialect, 'describe');
    cleanups.push(h);
    const w = await h.open();
    const schema = h.schema ?? 'main';
    try {
      await w.migrate(jobs());
      const before = await catalogComments(w, schema);
      const state = (all: typeof before, table: string) =>
        all.find((d) => d.table === table && d.column === 'state')?.comment;
      expect(state(before, 'jobs')).toMatch(/^State of the job\. Enum application_state: 0 Active, 1 Locked/);
      expect(state(before, 'jobs_current')).toBe(state(before, 'jobs'));
      await w.migrate(jobs());
      expect(await catalogComments(w, schema)).toEqual(before);
      await w.migrate(jobs('Where the job stands.'));
      const after = await catalogComments(w, schema);
      expect(state(after, 'jobs')).toMatch(/^Where the job stands\. Enum application_state/);
      expect(state(after, 'jobs_current')).toBe(state(after, 'jobs'));
    } finally {
      await w.close();
    }
  });
});
