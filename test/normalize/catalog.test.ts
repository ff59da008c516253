import { describe, expect, it } from 'vitest';

import { enumLabelRows, enums } from '../../src/normalize/index.ts';
import { streamMappings, mappingOf, streamNames, tableByName, tables } from '../../src/streams/registry.ts';

const expectedNames = [
  'programs',
  'program_funding_sources',
  'applications',
  'application_collaborators',
  'application_labels',
  'application_stages',
  'application_tasks',
  'task_responses',
  'application_notes',
  'assignments',
  'team_assignments',
  'teams',
  'users',
  'organizations',
  'organization_members',
  'eligibility',
  'eligibility_responses',
  'stages',
  'statuses',
  'payment_statuses',
  'tasks',
  'custom_fields',
  'custom_field_values',
  'funds',
  'budgets',
  'financial_transactions',
  'awards',
  'award_payments',
  'payments',
  'payment_sources',
  'activity',
  'api_log',
  'reports',
  'report_columns',
  'report_rows',
  'enum_labels',
  '_grantflow_quarantine',
];

describe('table catalog', () => {
  it('has exactly the contract table names', () => {
    expect([...tables.map((t) => t.name)].sort()).toEqual([...expectedNames].sort());
  });

  it('names are snake_case, column names unique, every column described', () => {
    for (const t of tables) {
      expect(t.name).toMatch(/^_?[a-z][a-z0-9_]*$/);
      expect(t.description.length).toBeGreaterThan(10);
      const names = t.columns.map((c) => c.name);
      expect(new Set(names).size, t.name).toBe(names.length);
      for (const c of t.columns) {
        expect(c.name, t.name).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(c.description.length, `${t.name}.${c.name}`).toBeGreaterThan(3);
      }
    }
  });

  it('primary key columns exist and are notNull', () => {
    for (const t of tables) {
      expect(t.primaryKey.length, t.name).toBeGreaterThan(0);
      for (const k of t.primaryKey) {
        const c = t.columns.find((x) => x.name === k);
        expect(c, `${t.name}.${k}`).toBeDefined();
        expect(c?.notNull, `${t.name}.${k}`).toBe(true);
      }
    }
  });

  it('every reference resolves to an existing table column of the same type, named *_id', () => {
    for (const t of tables) {
      for (const c of t.columns) {
        if (c.references === undefined) continue;
        expect(c.name, `${t.name}.${c.name}`).toMatch(/_id$/);
        const target = tableByName(c.references.table);
        expect(target, `${t.name}.${c.name} -> ${c.references.table}`).toBeDefined();
        const tc = target?.columns.find((x) => x.name === c.references?.column);
        expect(tc?.type, `${t.name}.${c.name}`).toBe(c.type);
      }
    }
  });

  it('every enum column names an enum that has labels', () => {
    const labelled = new Set(enumLabelRows().map((r) => r.enum));
    for (const t of tables)
      for (const c of t.columns)
        if (c.enum !== undefined) expect(labelled.has(c.enum), `${t.name}.${c.name}`).toBe(true);
    expect(enumLabelRows().find((r) => r.enum === 'transaction_type' && r.value === '4')?.label).toBe('Unknown (4)');
    expect(Object.keys(enums.tax_country)).toHaveLength(30);
  });

  it('stream mappings cover every stream and own/cascade only real columns', () => {
    expect(Object.keys(streamMappings).sort()).toEqual([...streamNames].sort());
    for (const s of streamNames) {
      const m = mappingOf(s);
      for (const o of m.owns) {
        const t = tableByName(o.table);
        expect(t, `${s} owns ${o.table}`).toBeDefined();
        for (const col of [...Object.keys(o.where ?? {}), ...(o.parentColumn ? [o.parentColumn] : [])]) {
          expect(
            t?.columns.some((c) => c.name === col),
            `${s}: ${o.table}.${col}`,
          ).toBe(true);
        }
      }
      for (const c of m.cascades) {
        expect(
          tableByName(c.table)?.columns.some((x) => x.name === c.column),
          `${c.table}.${c.column}`,
        ).toBe(true);
        expect(
          tableByName(c.parentTable)?.columns.some((x) => x.name === c.parentColumn),
          `${c.parentTable}.${c.parentColumn}`,
        ).toBe(true);
      }
    }
  });

  it('tables and owns: each table is owned by at most one stream per scope', () => {
    const seen = new Map<string, string>();
    for (const s of streamNames) {
      for (const o of mappingOf(s).owns) {
        const key = `${o.table}|${JSON.stringify(o.where ?? {})}`;
        expect(seen.get(key), key).toBeUndefined();
        seen.set(key, s);
      }
    }
  });
});
