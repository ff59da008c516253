import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  defaultDuckDBMemoryLimit,
  isPostgresUrl,
  schemaNamePattern,
  type WarehouseSettings,
} from '../config/settings.ts';
import { ConfigError } from '../util/errors.ts';
import { silentLogger, type Logger } from '../util/logger.ts';
export { SchemaNotYetCreated } from './schema-not-yet-created.ts';
import type { LockWait, RefreshMark, Warehouse } from './types.ts';
import { analyticsSchemaFor, maxSchemaLengthWithAnalytics } from './analytics-schema.ts';

export type * from './types.ts';
export { allColumns, catalogFingerprint, hasMetadata } from './ddl.ts';
export { sqlDialects } from './dialects.ts';
export { readLockInfo as duckdbLockHolder } from './duckdb/lock.ts';
export { syncedBefore } from './synced-before.ts';
export { analyticsSchemaFor } from './analytics-schema.ts';

export interface OpenWarehouseOptions {
  /** Postgres schema holding every table (default `public`, created if missing). Ignored for DuckDB. */
  readonly schema?: string;
  /**
   * DuckDB schema holding every table (default `main`): a portfolio's site (config/portfolio.ts). Created if missing
   * unless `existingOnly` or `readOnly`. Ignored for Postgres, whose schema is `schema`.
   */
  readonly duckdbSchema?: string;
  /** DuckDB's memory limit (e.g. `256MB`); ignored for Postgres. Default: `defaultDuckDBMemoryLimit`. */
  readonly duckdbMemoryLimit?: string;
  /** DuckDB's threads; ignored for Postgres. Default: DuckDB's, one per core. */
  readonly duckdbThreads?: number;
  readonly logger?: Logger;
  /**
   * A missing DuckDB file or Postgres schema is a ConfigError instead of being created: commands that read a
   * warehouse a sync wrote (status, models, snapshot), where a mistyped path must not make a new, empty one.
   */
  readonly existingOnly?: boolean;
  /**
   * Postgres (doctor): check the schema and privileges but create nothing; a missing schema the role may create
   * throws SchemaNotYetCreated, whose message says so.
   */
  readonly checkOnly?: boolean;
  /**
   * With `existingOnly`: the command writes tables (`models run`), so a Postgres role must be able to, as for a
   * sync (CREATE on the schema, owning grantflow's tables), or the open fails naming the grant. Read-only commands
   * (status, snapshot) leave this off: an analyst's role with SELECT only may run them.
   */
  readonly forWriting?: boolean;
  /**
   * DuckDB: open the existing file read-only (a missing one is a ConfigError, never created), so a command that only
   * reads runs alongside analysts' read-only connections; nothing can be written, so commands that migrate or write
   * bookkeeping leave this off. Postgres ignores it: there readers and writers never shut each other out.
   */
  readonly readOnly?: boolean;
  /**
   * Postgres: how long a load transaction waits, in attempts, for another session's lock on a table it writes
   * before the run fails (default `defaultLockWait`: 2 s attempts, 5 min). Ignored for DuckDB.
   */
  readonly loadLockWait?: LockWait;
  /**
   * Postgres: aborted when the command is told to stop (a signal); a load, model rebuild or migration waiting for
   * another session's lock then gives up at its next attempt, rolled back, with the stop's reason. Ignored for DuckDB.
   */
  readonly stop?: AbortSignal;
  /**
   * Postgres, a command that writes: the model tables it will rebuild (a sync with models, `models run`, doctor for a
   * sync). One of them owned by another role is a ConfigError naming it and the fix, before anything is written, not
   * a model failing after the ones before it were replaced. Ignored for DuckDB.
   */
  readonly models?: readonly string[];
}

/** The DuckDB library's version (e.g. `v1.5.5`), loading DuckDB only when asked. */
export async function duckdbVersion(): Promise<string> {
  return (await import('./duckdb/instance.ts')).duckdbVersion();
}

/** A DuckDB target whose file does not exist yet (the first sync creates it); false for Postgres. */
export function isNewDuckDBFile(target: string): boolean {
  return !isPostgresUrl(target) && !existsSync(target);
}

/** Open a DuckDB file (parent directories created) or a `postgres://` / `postgresql://` URL. */
export async function openWarehouse(target: string, options: OpenWarehouseOptions = {}): Promise<Warehouse> {
  const logger = options.logger ?? silentLogger;
  if (!target.trim()) throw new ConfigError('warehouse target is empty: give a DuckDB file path or a postgres:// URL');
  if (isPostgresUrl(target)) {
    const create = options.checkOnly ? 'check' : !options.existingOnly;
    const { PostgresWarehouse } = await import('./postgres/warehouse.ts');
    return PostgresWarehouse.open(target, checkedSchema(options.schema), logger, {
      create,
      writes: create !== false || options.forWriting === true,
      ...(options.loadLockWait ? { loadLockWait: options.loadLockWait } : {}),
      ...(options.stop ? { stop: options.stop } : {}),
      ...(options.models ? { models: options.models } : {}),
    });
  }
  if ((options.existingOnly || options.readOnly) && !existsSync(target))
    throw new ConfigError(`no warehouse at ${target}; run \`grantflow sync\` first or pass --warehouse`);
  const { DuckDBWarehouse } = await import('./duckdb/warehouse.ts');
  return DuckDBWarehouse.open(target, logger, {
    memoryLimit: options.duckdbMemoryLimit ?? defaultDuckDBMemoryLimit,
    ...(options.duckdbThreads !== undefined ? { threads: options.duckdbThreads } : {}),
    readOnly: options.readOnly === true,
    ...(options.duckdbSchema ? { schema: checkedSchema(options.duckdbSchema) } : {}),
    missingSchema: options.checkOnly ? 'check' : options.existingOnly ? 'refuse' : 'create',
  });
}

function checkedSchema(schema = 'public'): string {
  if (!schemaNamePattern.test(schema)) {
    throw new ConfigError(`warehouse schema "${schema}" is not a plain identifier (letters, digits, underscore)`);
  }
  if (schema.length > maxSchemaLengthWithAnalytics)
    throw new ConfigError(
      `warehouse schema "${schema}" is longer than ${maxSchemaLengthWithAnalytics} characters: its models' schema ` +
        `${analyticsSchemaFor(schema)} would not fit Postgres' 63-character names`,
    );
  return schema;
}

/**
 * Whether the warehouse may hold a rotated credential pair for `site` (null: for any site), found without creating
 * anything: a DuckDB file that exists (opening it would lock it), a Postgres schema with a stored pair for the site.
 */
export async function warehouseMayHoldCredentials(
  settings: WarehouseSettings,
  site: string | null,
  logger: Logger,
): Promise<boolean> {
  if (!isPostgresUrl(settings.warehouse)) return !isNewDuckDBFile(settings.warehouse);
  const { PostgresWarehouse } = await import('./postgres/warehouse.ts');
  return PostgresWarehouse.holdsCredentials(
    settings.warehouse,
    checkedSchema(settings.siteSchema ?? settings.schema),
    site,
    logger,
  );
}

/**
 * Marks that this process is refreshing the credentials kept in the warehouse the settings name, which need not exist
 * yet (see RefreshMark): a note beside a DuckDB file, a shared advisory lock on a Postgres schema.
 */
export async function markCredentialRefresh(settings: WarehouseSettings): Promise<RefreshMark> {
  if (!isPostgresUrl(settings.warehouse)) {
    const { markDuckDBRefresh } = await import('./duckdb/refresh-mark.ts');
    return markDuckDBRefresh(resolve(settings.warehouse));
  }
  const { markPostgresRefresh } = await import('./postgres/refresh-mark.ts');
  return markPostgresRefresh(settings.warehouse, checkedSchema(settings.siteSchema ?? settings.schema));
}

/** The warehouse a command's settings name, opened with their schema and DuckDB memory limit. */
export function openConfiguredWarehouse(
  settings: WarehouseSettings,
  logger: Logger,
  options: Pick<
    OpenWarehouseOptions,
    'existingOnly' | 'checkOnly' | 'forWriting' | 'readOnly' | 'loadLockWait' | 'stop' | 'models'
  > = {},
): Promise<Warehouse> {
  return openWarehouse(settings.warehouse, {
    schema: settings.siteSchema ?? settings.schema,
    ...(settings.siteSchema ? { duckdbSchema: settings.siteSchema } : {}),
    duckdbMemoryLimit: settings.duckdbMemoryLimit,
    ...(settings.duckdbThreads !== undefined ? { duckdbThreads: settings.duckdbThreads } : {}),
    logger,
    ...options,
  });
}
