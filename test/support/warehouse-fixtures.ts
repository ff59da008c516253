import { clusterName, dropPostgresSchema, postgresUrl } from './postgres.ts';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Row, TableDef } from '../../src/normalize/table-def.ts';
import { openWarehouse, sqlDialects, type Dialect, type Warehouse } from '../../src/warehouse/index.ts';
import { tempDir } from './temp-dir.ts';
import { migrationNames } from '../../src/warehouse/migrations.ts';

/** The versioned migrations' files (`sql/NNN_name.sql`), in the order they apply. */
export const migrationFiles = readdirSync(new URL('../../sql/', import.meta.url))
  .filter((f) => /^\d{3}_.+\.sql$/.test(f))
  .sort();

/** How many migrations a warehouse records once migrated: the SQL files and the ones written in TypeScript. */
export const migrationCount = (await migrationNames(sqlDialects[0])).length;

const d = (name: string, description = name) => ({ name, description });

/** A small hand-made catalog covering every column type and kind. */
export const catalog: TableDef[] = [
  {
    name: 'things',
    description: 'entity',
    kind: 'entity',
    primaryKey: ['id'],
    columns: [
      { ...d('id'), type: 'bigint', notNull: true },
      { ...d('name'), type: 'text' },
      { ...d('amount'), type: 'decimal' },
      { ...d('score'), type: 'double' },
      { ...d('count'), type: 'integer' },
      { ...d('flag'), type: 'boolean' },
      { ...d('happened_at'), type: 'timestamptz' },
      { ...d('payload'), type: 'json' },
      { ...d('owner_id'), type: 'bigint', references: { table: 'people', column: 'id' } },
    ],
  },
  {
    name: 'people',
    description: 'dimension from refs',
    kind: 'dimension',
    primaryKey: ['id'],
    columns: [
      { ...d('id'), type: 'bigint', notNull: true },
      { ...d('name'), type: 'text' },
      { ...d('email'), type: 'text' },
    ],
  },
  {
    name: 'thing_tags',
    description: 'bridge',
    kind: 'bridge',
    primaryKey: ['thing_id', 'tag'],
    columns: [
      { ...d('thing_id'), type: 'bigint', notNull: true },
      { ...d('tag'), type: 'text', notNull: true },
    ],
  },
  {
    name: 'notes',
    description: 'fan-out child',
    kind: 'entity',
    primaryKey: ['id'],
    columns: [
      { ...d('id'), type: 'text', notNull: true },
      { ...d('thing_id'), type: 'bigint' },
      { ...d('kind'), type: 'text' },
      { ...d('body'), type: 'text' },
    ],
  },
];

// Same shape as `things`, for tests that must not disturb its contents.
catalog.push({ ...catalog[0]!, name: 'slices', description: 'entity, loaded in slices' });

export function thing(id: number, over: Row = {}): Row {
  return {
    id,
    name: `thing ${id}`,
    amount: `${id}.5`,
    score: id / 4,
    count: id * 2,
    flag: id % 2 === 0,
    happened_at: `2024-01-02T03:04:05.${String(id % 1_000_000).padStart(6, '0')}Z`,
    payload: `{"id": ${id},  "x": [1, 2]}`,
    owner_id: id % 3,
    _raw: `{"id":${id}}`,
    ...over,
  };
}

export interface Harness {
  readonly dialect: Dialect;
  open(): Promise<Warehouse>;
  cleanup(): Promise<void>;
  /** Target string for a second opener (lock tests). */
  readonly target: string;
  readonly schema: string | undefined;
}

let counter = 0;

export async function harness(dialect: Dialect, label: string): Promise<Harness> {
  counter += 1;
  if (dialect === 'duckdb') {
    const dir = await tempDir(`gf-wh-${label}-`);
    const target = join(dir.path, 'nested', 'warehouse.duckdb');
    return {
      dialect,
      target,
      schema: undefined,
      open: () => openWarehouse(target),
      cleanup: dir.remove,
    };
  }
  const schema = `${clusterName(`wh_${label}`)}_${counter}`;
  return {
    dialect,
    target: postgresUrl,
    schema,
    open: () => openWarehouse(postgresUrl, { schema }),
    cleanup: () => dropPostgresSchema(schema),
  };
}

export const bothDialects: Dialect[] = ['duckdb', 'postgres'];

/** Order-independent content of a table, for before/after comparisons. */
export async function snapshot(wh: Warehouse, table: string, orderBy = 'id'): Promise<string> {
  const rows = await wh.query(`SELECT * FROM ${table} ORDER BY ${orderBy}`);
  return JSON.stringify(rows);
}

/**
 * A process that is not grantflow holding `path` open in DuckDB (an analyst's shell, or with `readOnly` a BI tool
 * or `duckdb -readonly`), once it holds it. Its pid is what DuckDB's lock error names; `release` ends it.
 */
export async function holdDuckDBFile(
  path: string,
  options: { readOnly?: boolean } = {},
): Promise<{ pid: number; release: () => Promise<void> }> {
  const nodeApi = createRequire(import.meta.url).resolve('@duckdb/node-api');
  const config = options.readOnly ? { access_mode: 'READ_ONLY' } : {};
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require(${JSON.stringify(nodeApi)}).DuckDBInstance.create(${JSON.stringify(path)}, ${JSON.stringify(config)}).then(() => { console.log('held'); setInterval(() => {}, 1000); })`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Resolves once the process is gone, and with it its lock on the file.
  const release = (): Promise<void> => {
    child.kill();
    return exited;
  };
  return { pid: child.pid!, release };
}
