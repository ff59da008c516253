import type { LockWait, Warehouse } from '../warehouse/types.ts';
import { ident, literal } from '../warehouse/values.ts';
import { firstLine, GrantflowError, throwIfStopped } from '../util/errors.ts';
import { testPause } from '../util/test-pause.ts';
import { silentLogger, type Logger } from '../util/logger.ts';
import { loadModels, orderModels, type ModelDef } from './model-files.ts';

export interface ModelResult {
  readonly name: string;
  readonly rows: number;
  readonly durationMs: number;
}

export interface ModelRunInfo {
  readonly models: readonly ModelResult[];
  readonly durationMs: number;
}

export interface RunModelsOptions {
  readonly logger?: Logger;
  /** Directory of the model files (default: the package's `models/`). */
  readonly dir?: string;
  /** Run only these models (their dependencies are not added). */
  readonly only?: readonly string[];
  /** Aborted (a signal): no further model starts; the one being built finishes. */
  readonly signal?: AbortSignal;
  /** Postgres: how long to wait for readers of a model table it must drop (default: postgres/lock-wait.ts). */
  readonly lockWait?: LockWait;
}

/**
 * Postgres: analysts and BI tools build views on model tables, and Postgres refuses to drop a table a view depends
 * on. So the new rows are built aside and, when the table already has the same columns and types, replace its rows
 * (DELETE + INSERT: readers are never blocked and views stay); only a table whose columns changed is dropped and
 * replaced. Every name is qualified with the warehouse schema: the search path also holds `public`, where an
 * unqualified DROP of a model the schema does not have yet would drop another warehouse's table. One implicit
 * transaction (a multi-statement text; an explicit BEGIN would leave a pooled connection in an aborted transaction
 * on failure).
 */
function postgresReplace(model: ModelDef, select: string): string {
  const name = literal(model.name);
  const next = literal(`_gf_next_${model.name}`);
  const columnsOf = (table: string): string =>
    `(SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute ` +
    `WHERE attrelid = to_regclass(quote_ident(current_schema()) || '.' || quote_ident(${table})) ` +
    `AND attnum > 0 AND NOT attisdropped)`;
  // CREATE TABLE without a schema creates in current_schema(), the warehouse's (it exists: migrations made it).
  return `CREATE TABLE ${ident(`_gf_next_${model.name}`)} AS ${select};
DO $gf$
DECLARE s text := current_schema();
BEGIN
  IF ${columnsOf(name)} IS NOT DISTINCT FROM ${columnsOf(next)} THEN
    EXECUTE format('DELETE FROM %I.%I', s, ${name});
    EXECUTE format('INSERT INTO %I.%I SELECT * FROM %I.%I', s, ${name}, s, ${next});
    EXECUTE format('DROP TABLE %I.%I', s, ${next});
  ELSE
    EXECUTE format('DROP TABLE IF EXISTS %I.%I', s, ${name});
    EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', s, ${next}, ${name});
  END IF;
END $gf$`;
}

/**
 * Replaces the model's table in one transaction, so readers see the old table or the new one. DuckDB needs
 * explicit BEGIN/COMMIT and a ROLLBACK on failure (its views do not pin the tables they read).
 */
async function materialise(warehouse: Warehouse, model: ModelDef, lockWait?: LockWait): Promise<void> {
  const name = ident(model.name);
  const select = model.sql[warehouse.dialect];
  if (warehouse.dialect === 'postgres') {
    await warehouse.execExclusive(postgresReplace(model, select), model.name, `model ${model.name}`, lockWait);
    return;
  }
  const replace = `DROP TABLE IF EXISTS ${name}; CREATE TABLE ${name} AS ${select}`;
  try {
    await warehouse.exec(`BEGIN TRANSACTION; ${replace}; COMMIT`);
  } catch (e) {
    await warehouse.exec('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

/** Runs every model in dependency order, materialised as a table named after it. */
export async function runModels(warehouse: Warehouse, options: RunModelsOptions = {}): Promise<ModelRunInfo> {
  const logger = options.logger ?? silentLogger;
  const started = Date.now();
  let models = orderModels(loadModels(options.dir));
  if (options.only) {
    const unknown = options.only.filter((n) => !models.some((m) => m.name === n));
    if (unknown.length > 0) throw new GrantflowError(`unknown model(s): ${unknown.join(', ')}`, 2, 'config');
    models = models.filter((m) => options.only?.includes(m.name));
  }
  const results: ModelResult[] = [];
  for (const model of models) {
    throwIfStopped(options.signal);
    const t0 = Date.now();
    try {
      await materialise(warehouse, model, options.lockWait);
    } catch (e) {
      throw new GrantflowError(
        `model ${model.name} failed on ${warehouse.dialect}: ${firstLine(e)} (${model.file})`,
        1,
        'model_failed',
        { cause: e },
      );
    }
    const [count] = await warehouse.query(`SELECT count(*) AS n FROM ${ident(model.name)}`);
    const result = { name: model.name, rows: Number(count?.n ?? 0), durationMs: Date.now() - t0 };
    // `model`, not `name`: pino's own `name` field (the logger's) must stay the only one in the line.
    logger.info({ model: result.name, rows: result.rows, durationMs: result.durationMs }, 'model built');
    results.push(result);
    await testPause(`model built ${model.name}`);
  }
  return { models: results, durationMs: Date.now() - started };
}
