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
  loadAllModels,
  loadAllSqlTests,
  modelTableNames,
  orderModels,
  modelTableDefs,
  loadSqlTests,
  defaultModelsDir,
  type ModelDef,
  type SqlTestDef,
} from './model-files.ts';
export { selectModels, selectTests, checkUpstreamBuilt } from './select-models.ts';
export { modelsForStreams, tablesFedBy, type ModelsForStreams } from './stream-models.ts';
