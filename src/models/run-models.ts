import type { LockWait, Warehouse } from '../warehouse/types.ts';
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

/** Replaces the model's table of the analytics schema in one transaction: readers see the old table or the new one. */
function materialise(warehouse: Warehouse, model: ModelDef, lockWait?: LockWait): Promise<void> {
  return warehouse.replaceTable(model.name, model.sql[warehouse.dialect], `model ${model.name}`, lockWait);
}

/** Runs every model in dependency order, materialised as a table named after it in the analytics schema. */
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
    const [count] = await warehouse.query(`SELECT count(*) AS n FROM ${warehouse.qualifyModel(model.name)}`);
    const result = { name: model.name, rows: Number(count?.n ?? 0), durationMs: Date.now() - t0 };
    // `model`, not `name`: pino's own `name` field (the logger's) must stay the only one in the line.
    logger.info({ model: result.name, rows: result.rows, durationMs: result.durationMs }, 'model built');
    results.push(result);
    await testPause(`model built ${model.name}`);
  }
  return { models: results, durationMs: Date.now() - started };
}
