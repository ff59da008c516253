export { runModels, type ModelRunInfo, type ModelResult, type RunModelsOptions } from './run-models.ts';
export {
  runDataTests,
  dataTests,
  hasErrorFailures,
  type DataTestResult,
  type DataTestOptions,
} from './run-data-tests.ts';
export { genericTests, type DataTestDef, type Severity } from './generic-tests.ts';
export {
  loadModels,
  modelTableNames,
  orderModels,
  modelTableDefs,
  loadSqlTests,
  defaultModelsDir,
  type ModelDef,
  type SqlTestDef,
} from './model-files.ts';
