import type { LockWait, Warehouse } from '../warehouse/types.ts';
import { firstLine, GrantflowError, throwIfStopped } from '../util/errors.ts';
import { testPause } from '../util/test-pause.ts';
import { silentLogger, type Logger } from '../util/logger.ts';
import { catalogObjects } from '../warehouse/catalog-comments.ts';
import { loadAllModels, loadModels, modelTableDefs, orderModels, type ModelDef } from './model-files.ts';
import { checkUpstreamBuilt, selectModels } from './select-models.ts';

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
  /** Directory of the model files (default: the package's `models/`, plus `userDir`'s). */
  readonly dir?: string;
  /** The user's `--models-dir`: its models are built with the built-in ones, in dependency order across both. */
  readonly userDir?: string;
  /** Run only these models (their dependencies are not added: a model they read must have been built before). */
  readonly only?: readonly string[];
  /** Aborted (a signal): no further model starts; the one being built finishes. */
  readonly signal?: AbortSignal;
  /** Postgres: how long to wait for readers of a model table it must drop (default: postgres/lock-wait.ts). */
  readonly lockWait?: LockWait;
}

/**
 * Replaces the model's table of the analytics schema in one transaction: readers see the old table or the new one.
 * Then its header's description and columns become the table's comments, for BI tools (a table made anew has none).
 */
async function materialise(warehouse: Warehouse, model: ModelDef, lockWait?: LockWait): Promise<void> {
  await warehouse.replaceTable(
    model.name,
    model.sql[warehouse.dialect],
    `model ${model.name}`,
    lockWait,
    model.primaryKey ?? [],
  );
  await warehouse.describe(modelTableDefs([model]).flatMap(catalogObjects), warehouse.analyticsSchema);
}

/** Runs every model in dependency order, materialised as a table named after it in the analytics schema. */
export async function runModels(warehouse: Warehouse, options: RunModelsOptions = {}): Promise<ModelRunInfo> {
  const logger = options.logger ?? silentLogger;
  const started = Date.now();
  let models = options.dir ? orderModels(loadModels(options.dir)) : loadAllModels(options.userDir);
  if (options.only) {
    models = selectModels(models, options.only);
    checkUpstreamBuilt(models, new Set((await warehouse.modelTables()).keys()));
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
