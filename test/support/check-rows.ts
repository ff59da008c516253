import { expect } from 'vitest';

import { type MappedRow } from '../../src/normalize/index.ts';
import type { CellValue } from '../../src/normalize/table-def.ts';
import { tableByName } from '../../src/streams/registry.ts';

/** Every mapped row fits its TableDef: known columns, typed values, keys present, `_raw` set. */
export function checkRows(rows: readonly MappedRow[]): void {
  for (const { table, row, merge } of rows) {
    const def = tableByName(table);
    expect(def, table).toBeDefined();
    if (def === undefined) continue;
    expect(typeof row._raw, `${table}._raw`).toBe('string');
    JSON.parse(row._raw as string);
    for (const k of def.primaryKey) expect(row[k] ?? null, `${table}.${k}`).not.toBeNull();
    const cols = new Map(def.columns.map((c) => [c.name, c]));
    for (const [k, v] of Object.entries(row)) {
      if (k === '_raw') continue;
      const c = cols.get(k);
      expect(c, `${table}.${k} is not a column`).toBeDefined();
      if (c !== undefined) checkValue(`${table}.${k}`, c.type, v);
    }
    if (merge === 'replace')
      for (const c of def.columns) expect(k(row, c.name), `${table}.${c.name} missing`).toBe(true);
  }
}

const k = (row: Record<string, CellValue>, name: string): boolean => Object.prototype.hasOwnProperty.call(row, name);

function checkValue(where: string, type: string, v: CellValue): void {
  if (v === null) return;
  switch (type) {
    case 'bigint':
    case 'integer':
      expect(typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)), where).toBe(true);
      break;
    case 'double':
      expect(typeof v, where).toBe('number');
      break;
    case 'decimal':
      expect(v, where).toMatch(/^-?\d{1,16}\.\d\d$/);
      break;
    case 'timestamptz':
      expect(v, where).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/);
      break;
    case 'json':
      expect(typeof v, where).toBe('string');
      JSON.parse(v as string);
      break;
    case 'boolean':
      expect(typeof v, where).toBe('boolean');
      break;
    case 'text':
      expect(typeof v, where).toBe('string');
      expect((v as string).includes('\u0000'), where).toBe(false);
      break;
  }
}

export function rowsOf(rows: readonly MappedRow[], table: string): Record<string, CellValue>[] {
  return rows.filter((r) => r.table === table).map((r) => r.row);
}
