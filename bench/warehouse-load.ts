/**
 * Loader throughput: 200k rows of a ~20-column entity table into each dialect (append to staging + merge).
 * Run: node --import tsx bench/warehouse-load.ts [rows]. Uses GRANTFLOW_TEST_POSTGRES_URL (default local test db).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Row, TableDef } from '../src/normalize/table-def.ts';
import { openWarehouse, type Warehouse } from '../src/warehouse/index.ts';

const total = Number(process.argv[2] ?? 200_000);
const batch = 2_000;
const pgUrl = process.env.GRANTFLOW_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const table: TableDef = {
  name: 'bench_applications',
  description: 'application-shaped rows',
  kind: 'entity',
  primaryKey: ['id'],
  columns: [
    { name: 'id', type: 'bigint', notNull: true, description: '' },
    { name: 'program_id', type: 'bigint', description: '' },
    { name: 'applicant_id', type: 'bigint', description: '' },
    { name: 'current_stage_id', type: 'bigint', description: '' },
    { name: 'status_id', type: 'integer', description: '' },
    { name: 'state', type: 'integer', description: '' },
    { name: 'title', type: 'text', description: '' },
    { name: 'summary', type: 'text', description: '' },
    { name: 'requested', type: 'decimal', description: '' },
    { name: 'awarded', type: 'decimal', description: '' },
    { name: 'score', type: 'double', description: '' },
    { name: 'is_archived', type: 'boolean', description: '' },
    { name: 'created_at', type: 'timestamptz', description: '' },
    { name: 'updated_at', type: 'timestamptz', description: '' },
    { name: 'submitted_at', type: 'timestamptz', description: '' },
    { name: 'custom', type: 'json', description: '' },
  ],
};

function row(i: number): Row {
  const ts = new Date(1_700_000_000_000 + i * 1000).toISOString();
  return {
    id: i,
    program_id: i % 50,
    applicant_id: i % 7919,
    current_stage_id: i % 13,
    status_id: i % 5,
    state: i % 4,
    title: `Application ${i} for the community garden fund`,
    summary: i % 10 === 0 ? null : `A short summary with "quotes", tabs\tand ünïcödé ${i}`,
    requested: `${i % 100000}.25`,
    awarded: i % 3 === 0 ? null : `${i % 5000}.00`,
    score: (i % 1000) / 7,
    is_archived: i % 11 === 0,
    created_at: ts,
    updated_at: ts,
    submitted_at: i % 5 === 0 ? null : ts,
    custom: `{"field_${i % 20}":"value ${i}","n":${i}}`,
    _raw: `{"id":${i},"title":"Application ${i}","program":{"id":${i % 50}}}`,
  };
}

async function run(wh: Warehouse, label: string): Promise<void> {
  await wh.migrate([table]);
  for (const pass of ['insert', 're-merge']) {
    const unit = await wh.openLoad();
    const t0 = performance.now();
    for (let i = 0; i < total; i += batch) {
      const rows: Row[] = [];
      for (let j = i; j < Math.min(total, i + batch); j++) rows.push(row(j + 1));
      await unit.append(table.name, rows);
    }
    const t1 = performance.now();
    await unit.commit({ runId: pass, extractedAt: new Date().toISOString(), completeScopes: [{ table: table.name }] });
    const t2 = performance.now();
    const rate = (ms: number): string => `${Math.round((total / ms) * 1000).toLocaleString('en')} rows/s`;
    console.log(
      `${label.padEnd(8)} ${pass.padEnd(8)} staging ${(t1 - t0).toFixed(0)} ms (${rate(t1 - t0)}), merge ${(t2 - t1).toFixed(0)} ms, total ${rate(t2 - t0)}`,
    );
  }
  await wh.close();
}

const dir = mkdtempSync(join(tmpdir(), 'gf-bench-'));
try {
  await run(await openWarehouse(join(dir, 'bench.duckdb')), 'duckdb');
  const schema = `gf_bench_${process.pid}`;
  const wh = await openWarehouse(pgUrl, { schema });
  try {
    await run(wh, 'postgres');
  } finally {
    const cleanup = await openWarehouse(pgUrl, { schema });
    await cleanup.exec(`DROP SCHEMA "${schema}" CASCADE`);
    await cleanup.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
